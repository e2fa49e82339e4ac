"""Gemini CLI's saved chats: ``~/.gemini/tmp/<project>/chats/session-*.jsonl`` (a record kept
as JSON lines: a header, each message, ``$set`` and ``$rewindTo`` updates) and the older
``session-*.json`` (the record whole).

The record is replayed as Gemini CLI loads it, and its messages become the ``contents`` it sends
as it rebuilds them on resume (thoughts as thought parts, each call's result after it), read
as serve's Gemini API reads contents (:mod:`contextfold.core.wire.gemini`). Each model message
carries its response's token counts. The system prompt is not in the record: ``system`` is None.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from contextfold.core.billing import BilledUsage
from contextfold.core.errors import ImportFormatError, MessageFormatError
from contextfold.core.wire import gemini
from contextfold.importers.base import RecordedCall, Trajectory
from contextfold.importers.probe import Format, Item, Probe
from contextfold.importers.records import at_line, broken_line, count, iso_time, main_model
from contextfold.importers.steps import group_steps

__all__ = ["FORMAT", "read"]

_IGNORED = ("/", "?")
"""User messages Gemini CLI never sends: commands (``/stats``) and the help key."""


@dataclass(slots=True)
class _Record:
    """The chat record as the lines build it: its metadata and messages (by id, in order)."""

    meta: dict[str, Any] = field(default_factory=dict)
    messages: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)

    def add(self, number: int, data: Mapping[str, Any]) -> None:
        if isinstance(data.get("$rewindTo"), str):
            self.counts["$rewindTo"] += 1
            self._rewind(data["$rewindTo"])
        elif isinstance(data.get("id"), str):
            self.counts[f"message:{data.get('type')}"] += 1
            self.messages[data["id"]] = data
            self.lines[data["id"]] = number
        elif isinstance(data.get("$set"), Mapping):
            self.counts["$set"] += 1
            self._set(number, data["$set"])
        elif isinstance(data.get("sessionId"), str):
            self.counts["header"] += 1
            self._set(number, data)
        else:
            self.counts["other"] += 1

    def _set(self, number: int, values: Mapping[str, Any]) -> None:
        found = values.get("messages")
        if isinstance(found, list):
            self.messages.clear()
            for message in found:
                if isinstance(message, Mapping) and isinstance(message.get("id"), str):
                    self.messages[message["id"]] = message
                    self.lines[message["id"]] = number
        self.meta.update((k, v) for k, v in values.items() if k != "messages")

    def _rewind(self, to: str) -> None:
        """Gemini CLI's ``/rewind``: that message and every one after it are gone."""
        ids = list(self.messages)
        for gone in ids[ids.index(to) :] if to in ids else ids:
            del self.messages[gone]


def _contents(record: _Record) -> tuple[list[dict[str, Any]], list[str], list[RecordedCall]]:
    """The contents Gemini CLI sends for the record's messages, the message id each came from,
    and the call behind each model content."""
    contents: list[dict[str, Any]] = []
    origins: list[str] = []
    calls: list[RecordedCall] = []
    for ident, message in record.messages.items():
        kind = message.get("type")
        if kind == "user":
            parts = _parts(message.get("content"))
            said = "".join(p.get("text", "") for p in parts if isinstance(p.get("text"), str))
            if not said.strip() or said.strip().startswith(_IGNORED):
                continue
            if contents and contents[-1]["role"] == "user":  # one content, as Gemini CLI sends
                contents[-1]["parts"] = [*contents[-1]["parts"], *parts]
            else:
                contents.append({"role": "user", "parts": parts})
                origins.append(ident)
        elif kind == "gemini":
            model = _model_parts(message)
            if not model:
                continue
            contents.append({"role": "model", "parts": model})
            origins.append(ident)
            calls.append(_call(message))
            answers = _answers(message)
            if answers:
                contents.append({"role": "user", "parts": answers})
                origins.append(ident)
    return contents, origins, calls


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}]
    items = content if isinstance(content, list) else [content]
    return [{"text": p} if isinstance(p, str) else p for p in items if isinstance(p, str | dict)]


def _model_parts(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """As Gemini CLI rebuilds a model turn: its thoughts, its text, then its calls."""
    content = _parts(message.get("content")) if message.get("content") else []
    if any("functionCall" in p or p.get("thought") for p in content):
        return content
    parts = []
    for thought in message.get("thoughts") or []:
        if isinstance(thought, Mapping) and isinstance(thought.get("description"), str):
            subject = thought.get("subject")
            head = f"**{subject}** " if isinstance(subject, str) and subject else ""
            parts.append({"text": head + thought["description"], "thought": True})
    parts.extend(content)
    for call in _tool_calls(message):
        parts.append({"functionCall": {k: call.get(k) for k in ("id", "name", "args")}})
    return parts


def _answers(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each call's result as the ``functionResponse`` parts Gemini CLI sends."""
    out: list[dict[str, Any]] = []
    for call in _tool_calls(message):
        result = call.get("result")
        if isinstance(result, str):
            response = {
                "id": call.get("id"),
                "name": call.get("name"),
                "response": {"output": result},
            }
            out.append({"functionResponse": response})
        elif isinstance(result, list):
            out.extend(_parts(result))
        elif isinstance(result, dict):
            out.append(result)
    return out


def _tool_calls(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    calls = message.get("toolCalls")
    return [c for c in calls if isinstance(c, Mapping)] if isinstance(calls, list) else []


def _call(message: Mapping[str, Any]) -> RecordedCall:
    tokens = message.get("tokens")
    model = message.get("model")
    usage = None
    if isinstance(tokens, Mapping):
        prompt, cached = count(tokens, "input"), count(tokens, "cached")
        usage = BilledUsage(
            input_tokens=max(prompt - cached, 0) + count(tokens, "tool"),
            cache_read_tokens=cached,
            output_tokens=count(tokens, "output") + count(tokens, "thoughts"),
        )
    return RecordedCall(
        usage, iso_time(message.get("timestamp")), model if isinstance(model, str) else None
    )


def read(probe: Probe) -> Iterator[Item]:
    """The chat's session, and an error for each line that could not be read."""
    record = _Record()
    document = probe.document
    if isinstance(document, Mapping):  # the older whole-record file
        record.add(1, document)
    else:
        yield from _lines(probe, record)
    try:
        found = _trajectory(probe, record)
    except ImportFormatError as exc:
        yield exc
        return
    if found is not None:
        yield found


def _lines(probe: Probe, record: _Record) -> Iterator[ImportFormatError]:
    for number, text in probe.lines():
        if not text.strip():
            continue
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            data = None
        if isinstance(data, Mapping):
            record.add(number, data)
            continue
        record.counts["broken"] += 1
        yield broken_line(probe.name, number)


def _trajectory(probe: Probe, record: _Record) -> Trajectory | None:
    contents, origins, calls = _contents(record)
    if not calls:
        return None
    lines = [record.lines.get(origin, 0) for origin in origins]
    try:
        items = gemini.read_contents(contents)
    except MessageFormatError as exc:
        raise ImportFormatError(
            probe.name, at_line(exc.at, "contents", lines), exc.problem
        ) from exc
    labeled = [(at_line(label, "contents", lines), message) for label, message in items]
    grouped = group_steps(probe.name, labeled)
    meta: dict[str, Any] = {"format": "gemini-cli", "file": probe.path.name}
    meta.update(
        session_id=record.meta.get("sessionId"),
        project_hash=record.meta.get("projectHash"),
        kind=record.meta.get("kind"),
        lines=dict(record.counts),
    )
    if grouped.dropped_calls:
        meta["unanswered_calls_dropped"] = grouped.dropped_calls
    ident = record.meta.get("sessionId")
    return Trajectory(
        ident if isinstance(ident, str) else probe.path.stem, probe.name, None, grouped.steps,
        meta=meta, model=main_model(calls), calls=tuple(calls),
    )  # fmt: skip


def _claims(probe: Probe) -> bool:
    """A chat record: a header with ``sessionId`` and ``projectHash`` (and no Claude Code
    ``type``) first, or the whole record in one JSON document."""
    first = probe.first_lines[0] if probe.first_lines else None
    if isinstance(first, Mapping) and {"sessionId", "projectHash"} <= set(first):
        return "type" not in first
    if probe.path.suffix != ".json":
        return False
    whole = probe.document
    return isinstance(whole, Mapping) and {"sessionId", "projectHash", "messages"} <= set(whole)


FORMAT = Format(
    name="gemini-cli",
    summary="Gemini CLI's saved chats: ~/.gemini/tmp/<project>/chats/session-*",
    suffixes=(".jsonl", ".json"),
    claims=_claims,
    read=read,
)
