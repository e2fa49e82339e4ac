"""Codex CLI's session logs: ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``.

Each line is ``{timestamp, type, payload}``: the session's meta (its system prompt, the CLI's
version), each ``response_item`` Codex sent or got (read as serve's Responses API reads input
items: :mod:`contextfold.core.wire.responses`), the turn's context (the model) and events, the
token counts of each response among them. A compaction starts a new segment (``#2``) from the
history Codex kept. Each assistant step carries its response's usage
(:class:`~contextfold.importers.base.RecordedCall`; OpenAI bills no cache writes).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from contextfold.core.billing import BilledUsage
from contextfold.core.errors import ImportFormatError, MessageFormatError
from contextfold.core.messages import SystemMessage
from contextfold.core.wire import responses
from contextfold.importers.base import RecordedCall, Trajectory
from contextfold.importers.probe import Format, Item, Probe
from contextfold.importers.records import at_line, broken_line, count, iso_time, main_model
from contextfold.importers.steps import group_steps

__all__ = ["FORMAT", "read"]

_ENVELOPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
_NOT_SENT = {"ghost_snapshot"}
"""Item types Codex keeps for itself (an undo snapshot) and never sends."""
_PRIVATE = ("internal_chat_message_metadata_passthrough",)
"""Keys of an item that are Codex's own notes, not sent."""
_BREAKS = {"function_call_output", "custom_tool_call_output", "local_shell_call_output"}


@dataclass(slots=True)
class _Segment:
    """One stretch of the session between compactions: its items and the calls behind them."""

    items: list[dict[str, Any]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    calls: list[RecordedCall] = field(default_factory=list)
    open: bool = False
    """Whether the last item kept was the model's (a response's items run on)."""


@dataclass(slots=True)
class _Rollout:
    path: str
    meta: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    segments: list[_Segment] = field(default_factory=lambda: [_Segment()])
    counts: Counter[str] = field(default_factory=Counter)
    errors: list[ImportFormatError] = field(default_factory=list)
    usage_kind: str = "token_count"

    def item(self, number: int, item: Any, at: float | None) -> None:
        segment = self.segments[-1]
        if not isinstance(item, dict) or item.get("type") in _NOT_SENT:
            return
        item = {k: v for k, v in item.items() if k not in _PRIVATE}
        kind = _kind(item)
        ours = _model_side(item)
        if ours and not segment.open:
            segment.calls.append(RecordedCall(None, at, self.model))
        if ours or kind in _BREAKS or kind == "message":
            segment.open = ours
        segment.items.append(item)
        segment.lines.append(number)

    def usage(self, raw: Any) -> None:
        calls = self.segments[-1].calls
        usage = _usage(raw)
        if usage is not None and calls and calls[-1].usage is None and calls[-1].at is not None:
            last = calls[-1]
            calls[-1] = RecordedCall(usage, last.at, last.model)


def _kind(item: Mapping[str, Any]) -> Any:
    return item.get("type", "message" if "role" in item else None)


def _model_side(item: Mapping[str, Any]) -> bool:
    kind = _kind(item)
    if kind == "message":
        return item.get("role") == "assistant"
    return kind in responses.OUTPUT_ITEMS or kind in ("function_call", "custom_tool_call")


def _usage(raw: Any) -> BilledUsage | None:
    if not isinstance(raw, Mapping):
        return None
    prompt, cached = count(raw, "input_tokens"), count(raw, "cached_input_tokens")
    return BilledUsage(
        input_tokens=max(prompt - cached, 0),
        cache_read_tokens=cached,
        cache_write_tokens=count(raw, "cache_write_input_tokens"),
        output_tokens=count(raw, "output_tokens"),
    )


def _line(rollout: _Rollout, number: int, data: Mapping[str, Any]) -> None:
    kind, payload = data.get("type"), data.get("payload")
    at = iso_time(data.get("timestamp"))
    if "payload" not in data and not rollout.meta and {"id", "instructions"} <= set(data):
        kind, payload = "session_meta", data  # the first line of early rollouts
    elif "payload" not in data and isinstance(kind, str):
        kind, payload = "response_item", data  # early rollouts: the items as they are
    elif kind is None:
        kind = data.get("record_type", "untyped")  # early rollouts' state records
    rollout.counts[str(kind)] += 1
    if kind == "session_meta" and isinstance(payload, Mapping) and not rollout.meta:
        rollout.meta = dict(payload)
    elif kind == "response_item":
        rollout.item(number, payload, at)
    elif kind == "turn_context" and isinstance(payload, Mapping):
        model = payload.get("model")
        rollout.model = model if isinstance(model, str) else rollout.model
    elif kind == "token_usage_record" and isinstance(payload, Mapping):
        rollout.usage(payload.get("usage"))
    elif (
        kind == "event_msg"
        and isinstance(payload, Mapping)
        and rollout.usage_kind != "token_usage_record"
    ):
        info = payload.get("info") if payload.get("type") == "token_count" else None
        rollout.usage(info.get("last_token_usage") if isinstance(info, Mapping) else None)
    elif kind == "compacted" and isinstance(payload, Mapping):
        _compacted(rollout, number, payload)


def _compacted(rollout: _Rollout, number: int, payload: Mapping[str, Any]) -> None:
    """A new segment from the history Codex kept (or its summary, as the user's message)."""
    rollout.segments.append(_Segment())
    kept = payload.get("replacement_history")
    if not isinstance(kept, list):
        summary = payload.get("message")
        text = {"type": "input_text", "text": summary if isinstance(summary, str) else ""}
        kept = [{"type": "message", "role": "user", "content": [text]}]
    for item in kept:  # its replies' calls were billed before: their usage is not here
        rollout.item(number, item, None)
    rollout.segments[-1].open = False


def read(probe: Probe) -> Iterator[Item]:
    """Each segment of the rollout, and an error for each line that could not be read."""
    rollout = _Rollout(probe.name)
    parsed = list(_parsed(probe, rollout))
    if any(d.get("type") == "token_usage_record" for _, d in parsed):
        rollout.usage_kind = "token_usage_record"  # one a response; token_count repeats them
    for number, data in parsed:
        _line(rollout, number, data)
    yield from rollout.errors
    system = _system(rollout.meta)
    for k, segment in enumerate(rollout.segments, start=1):
        try:
            found = _trajectory(probe, rollout, segment, system, k)
        except ImportFormatError as exc:
            yield exc
            continue
        if found is not None:
            yield found


def _parsed(probe: Probe, rollout: _Rollout) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, text in probe.lines():
        if not text.strip():
            continue
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            data = None
        if not isinstance(data, dict):
            rollout.counts["broken"] += 1
            rollout.errors.append(broken_line(probe.name, number))
            continue
        yield number, data


def _system(meta: Mapping[str, Any]) -> SystemMessage | None:
    base = meta.get("base_instructions")
    text = base.get("text") if isinstance(base, Mapping) else meta.get("instructions")
    return SystemMessage(text) if isinstance(text, str) and text else None


def _trajectory(
    probe: Probe, rollout: _Rollout, segment: _Segment, system: SystemMessage | None, k: int
) -> Trajectory | None:
    if not segment.calls:
        return None
    try:
        items = responses.read_input(segment.items, "items")
    except MessageFormatError as exc:
        raise ImportFormatError(
            probe.name, at_line(exc.at, "items", segment.lines), exc.problem
        ) from exc
    labeled = [(at_line(label, "items", segment.lines), message) for label, message in items]
    grouped = group_steps(probe.name, labeled, system=system)
    meta = rollout.meta
    ident = meta.get("id") if isinstance(meta.get("id"), str) else probe.path.stem
    info: dict[str, Any] = {"format": "codex", "file": probe.path.name, "segment": k}
    info.update(
        session_id=meta.get("id"),
        version=meta.get("cli_version"),
        cwd=meta.get("cwd"),
        lines=dict(rollout.counts),
    )
    if grouped.dropped_calls:
        info["unanswered_calls_dropped"] = grouped.dropped_calls
    calls = tuple(segment.calls)
    return Trajectory(
        f"{ident}#{k}" if k > 1 else str(ident), probe.name, grouped.system, grouped.steps,
        meta=info, model=main_model(calls), calls=calls,
    )  # fmt: skip


def _claims(probe: Probe) -> bool:
    """A Codex rollout: its first lines are ``{timestamp, type, payload}`` of Codex's kinds."""
    for data in probe.first_lines:
        if isinstance(data, Mapping) and data.get("type") in _ENVELOPES and "payload" in data:
            return True
    first = probe.first_lines[0] if probe.first_lines else None
    return isinstance(first, Mapping) and {"id", "timestamp", "instructions"} <= set(first)


FORMAT = Format(
    name="codex",
    summary="Codex CLI's ~/.codex/sessions/**/rollout-*.jsonl",
    suffixes=(".jsonl",),
    claims=_claims,
    read=read,
)
