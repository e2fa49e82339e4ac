"""The proxy's counters, written as Prometheus text at ``/metrics``."""

from __future__ import annotations

import threading
from collections import Counter

__all__ = ["GAUGES", "METRICS", "Metrics"]

METRICS: dict[str, str] = {
    "requests_total": "Chat completion requests answered, by status code.",
    "prompt_tokens_received_total": "Prompt tokens clients sent (whole conversations, counted "
    "by the proxy's token counter).",
    "prompt_tokens_sent_total": "Prompt tokens of the view sent upstream first for each "
    "request (same counter); upstream_prompt_tokens_total is larger: it counts every call.",
    "tokens_saved_total": "Prompt tokens received less those sent, over first upstream calls.",
    "upstream_prompt_tokens_total": "Prompt tokens the upstream reported over every call, the "
    "strategy-tool rounds after a request's first call included, counted by the upstream with "
    "its chat template and tool schemas.",
    "upstream_cached_tokens_total": "Prompt tokens the upstream reported served from its cache.",
    "upstream_completion_tokens_total": "Completion tokens the upstream reported.",
    "upstream_calls_total": "Calls made to the upstream.",
    "folds_total": "Fold records the strategy made (accepted or refused).",
    "strategy_tool_calls_total": "Calls of the strategy's own tools answered by the proxy.",
    "sessions_created_total": "Sessions started (new conversations and branches).",
    "errors_total": "Requests that failed, by kind.",
    "upstream_pool_timeouts_total": "Requests refused (503) because no upstream connection came "
    "free in time.",
}
"""Every counter (``contextfold_`` prefixed) and its help text."""

GAUGES: dict[str, str] = {
    "sessions_skipped": "Stored sessions that could not be read at start-up (not served).",
    "upstream_connections_limit": "Connections to the upstream open at once at most "
    "(--max-upstream-connections), shared by every session.",
    "upstream_connections_in_use": "Connections to the upstream in use now.",
    "responses_kept": "Responses API answers kept for previous_response_id.",
    "responses_kept_bytes": "Bytes (as JSON) of the Responses API answers kept, at most "
    "--responses-memory.",
}
"""Every gauge (a value that goes up and down) and its help text."""


class Metrics:
    """Counters with optional labels; safe to update from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: Counter[tuple[str, tuple[tuple[str, str], ...]]] = Counter()

    def add(self, name: str, value: int = 1, **labels: str) -> None:
        if name not in METRICS:
            raise KeyError(f"unknown metric {name!r}")
        with self._lock:
            self._values[name, tuple(sorted(labels.items()))] += value

    def set(self, name: str, value: int) -> None:
        """Set a gauge."""
        if name not in GAUGES:
            raise KeyError(f"unknown gauge {name!r}")
        with self._lock:
            self._values[name, ()] = value

    def get(self, name: str, **labels: str) -> int:
        with self._lock:
            return self._values[name, tuple(sorted(labels.items()))]

    def render(self) -> str:
        """Prometheus text exposition format (version 0.0.4)."""
        with self._lock:
            values = dict(self._values)
        lines: list[str] = []
        kinds = [(n, h, "counter") for n, h in METRICS.items()]
        for name, help_text, kind in [*kinds, *((n, h, "gauge") for n, h in GAUGES.items())]:
            full = f"contextfold_{name}"
            lines += [f"# HELP {full} {help_text}", f"# TYPE {full} {kind}"]
            series = sorted((labels, v) for (n, labels), v in values.items() if n == name)
            if not series and name not in ("requests_total", "errors_total"):
                series = [((), 0)]
            for labels, value in series:
                text = ",".join(f'{k}="{_escape(v)}"' for k, v in labels)
                lines.append(f"{full}{{{text}}} {value}" if text else f"{full} {value}")
        return "\n".join(lines) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
