"""The proxy's counters and gauges, exposed at ``/metrics`` in Prometheus's text format by
prometheus_client (:class:`Metrics`)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

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
    "upstream_cache_write_tokens_total": "Prompt tokens the upstream reported written to its "
    "cache, by lifetime (Anthropic's 5-minute and 1-hour writes; OpenAI and Gemini write none).",
    "billed_usd_total": "Dollars the upstream billed for the calls, its reported usage at the "
    "model's own prices, by arm and call (the client's, or a restore round the proxy made).",
    "direct_estimate_usd_total": "Dollars the same calls would have cost sent direct (the "
    "client's whole conversation through the meter's simulated cache, at the session's token "
    "scale), by arm; less billed_usd_total: what folding saved.",
}
"""Every counter (``contextfold_`` prefixed) and its help text."""

_ZEROS: dict[str, list[dict[str, str]]] = {
    "requests_total": [],
    "errors_total": [],
    "billed_usd_total": [],
    "direct_estimate_usd_total": [],
    "upstream_cache_write_tokens_total": [{"ttl": "5m"}, {"ttl": "1h"}],
}
"""The series shown before anything is counted, for the counters with labels (the others
show one 0)."""

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
    """Counters with optional labels, and gauges; safe to update from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        self._registry = CollectorRegistry(auto_describe=False)
        self._registry.register(_Collector(self))

    def add(self, name: str, value: float = 1, **labels: str) -> None:
        if name not in METRICS:
            raise KeyError(f"unknown metric {name!r}")
        key = (name, tuple(sorted(labels.items())))
        with self._lock:
            self._values[key] = self._values.get(key, 0) + value

    def set(self, name: str, value: float) -> None:
        """Set a gauge."""
        if name not in GAUGES:
            raise KeyError(f"unknown gauge {name!r}")
        with self._lock:
            self._values[name, ()] = value

    def get(self, name: str, **labels: str) -> float:
        with self._lock:
            return self._values.get((name, tuple(sorted(labels.items()))), 0)

    def series(self, name: str) -> list[tuple[dict[str, str], float]]:
        """Every series of ``name`` now: its labels and value (the defaults when none)."""
        with self._lock:
            found = sorted((k[1], v) for k, v in self._values.items() if k[0] == name)
        if found:
            return [(dict(labels), value) for labels, value in found]
        return [(labels, 0) for labels in _ZEROS.get(name, [{}])]

    def render(self) -> str:
        """Prometheus text exposition format (version 0.0.4)."""
        return generate_latest(self._registry).decode()


class _Collector:
    """The metrics as prometheus_client collects them."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        kinds: list[type[CounterMetricFamily] | type[GaugeMetricFamily]] = [
            CounterMetricFamily,
            GaugeMetricFamily,
        ]
        families = [(n, h, kinds[0]) for n, h in METRICS.items()]
        families += [(n, h, kinds[1]) for n, h in GAUGES.items()]
        for name, help_text, kind in families:
            series = self.metrics.series(name)
            names = sorted(series[0][0]) if series else []
            family = kind(f"contextfold_{name}", help_text, labels=names)
            for labels, value in series:
                family.add_metric([labels[n] for n in names], value)
            yield family
