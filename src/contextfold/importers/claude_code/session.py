"""One Claude Code conversation as a :class:`~contextfold.importers.base.Trajectory`.

Its messages are read by serve's Anthropic reader (:mod:`contextfold.core.wire.anthropic`), so
a session replayed from its log and one seen through ``contextfold serve`` are the same
messages. Attachments (the context Claude Code adds to a request) become parts of the
user-side message they follow, counted as the text the log says the model was shown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from contextfold.core.billing import BilledUsage
from contextfold.core.errors import ImportFormatError, MessageFormatError
from contextfold.core.grouping import Labeled
from contextfold.core.messages import Message, SystemMessage, ToolMessage, UserMessage
from contextfold.core.parts import Part
from contextfold.core.wire import anthropic
from contextfold.importers.base import RecordedCall
from contextfold.importers.claude_code.conversation import Conversation, Reply
from contextfold.importers.claude_code.lines import Line
from contextfold.importers.records import count, iso_time

__all__ = ["ATTACHMENT", "attachment_text", "labeled", "recorded_call", "system_of"]

ATTACHMENT = "claude-code:attachment"
"""The kind of the part an attachment becomes."""


def labeled(path: str, conv: Conversation) -> list[Labeled]:
    """The conversation's messages read as serve reads them, each labelled by its line, the
    attachments put on the user-side messages they follow."""
    try:
        items = anthropic.read_messages(conv.messages)
    except MessageFormatError as exc:
        raise ImportFormatError(path, _at_line(exc.at, conv.origins), exc.problem) from exc
    indexed = [(_index(label), message) for label, message in items]
    parts = _attachment_parts(indexed, conv.attachments)
    return [
        (_at_line(label, conv.origins), _with(message, parts.get(k, [])))
        for k, ((label, _), (_, message)) in enumerate(zip(items, indexed, strict=True))
    ]


def _attachment_parts(
    indexed: Sequence[tuple[int, Message]], attachments: Sequence[tuple[int, Line]]
) -> dict[int, list[Part]]:
    """Each attachment's part, under the position of the user-side message it goes with: the
    last one at or before the message it follows, else the first one after."""
    sides = [k for k, (_, m) in enumerate(indexed) if isinstance(m, UserMessage | ToolMessage)]
    out: dict[int, list[Part]] = {}
    for after, line in attachments:
        before = [k for k in sides if indexed[k][0] <= after]
        target = before[-1] if before else (sides[0] if sides else None)
        part = _part(line)
        if target is not None and part.text:  # one that showed the model nothing adds nothing
            out.setdefault(target, []).append(part)
    return out


def _part(line: Line) -> Part:
    attachment = line.data.get("attachment")
    value = {"attachment": attachment, "rendered": line.data.get("rendered")}
    return Part.of(ATTACHMENT, value, text=attachment_text(line.data))


def attachment_text(data: Mapping[str, Any]) -> str:
    """What the model was shown of an attachment: its ``rendered`` text where the log keeps it
    (Claude Code 2.1.3xx), else the text the attachment itself carries (a listing's lines, a
    reminder's content, the context a hook added)."""
    rendered = data.get("rendered")
    if isinstance(rendered, list):
        texts = [r.get("content") for r in rendered if isinstance(r, Mapping)]
        return "\n".join(t for t in texts if isinstance(t, str))
    attachment = data.get("attachment")
    if not isinstance(attachment, Mapping):
        return ""
    texts = [attachment.get(k) for k in ("content", "text")]
    lines = attachment.get("addedLines")
    if isinstance(lines, list):
        texts.append("\n".join(x for x in lines if isinstance(x, str)))
    texts.append(_hook_context(attachment.get("stdout")))
    return "\n".join(t for t in texts if isinstance(t, str) and t)


def _hook_context(stdout: Any) -> str:
    """The ``additionalContext`` a hook printed (the one part of its output the model sees)."""
    try:
        data = json.loads(stdout) if isinstance(stdout, str) and stdout.strip() else None
    except json.JSONDecodeError:
        return ""
    if not isinstance(data, Mapping):
        return ""
    specific = data.get("hookSpecificOutput")
    found = data.get("additionalContext")
    if found is None and isinstance(specific, Mapping):
        found = specific.get("additionalContext")
    return found if isinstance(found, str) else ""


def _with(message: Message, parts: list[Part]) -> Message:
    return replace(message, parts=(*message.parts, *parts)) if parts else message


def _index(label: str) -> int:
    return int(label.split(".")[1])


def _at_line(at: str, origins: Sequence[int]) -> str:
    """``messages.3.content.1`` as ``line 42, content.1`` (the line message 3 began at)."""
    head, _, rest = at.partition(".")
    index, _, rest = rest.partition(".")
    if head != "messages" or not index.isdigit() or int(index) >= len(origins):
        return at
    where = f"line {origins[int(index)]}"
    return f"{where}, {rest}" if rest else where


def system_of(path: str, shapes: Sequence[Line], before: int) -> SystemMessage | None:
    """The system prompt of the last request shape logged before line ``before`` (Claude Code
    2.1.3xx logs each request's ``system`` and tools once); None where the log has none."""
    earlier = [s for s in shapes if s.number < before]
    if not earlier:
        return None
    shape = earlier[-1].data.get("shape")
    raw = shape.get("system") if isinstance(shape, Mapping) else None
    try:
        return anthropic.read_system(raw)
    except MessageFormatError as exc:
        raise ImportFormatError(path, f"line {earlier[-1].number}, {exc.at}", exc.problem) from exc


def recorded_call(reply: Reply) -> RecordedCall:
    """What the log says of the call behind ``reply``: usage from a line that has the reply's
    ``stop_reason`` (the final count) where one does, else from its last line."""
    final = [line for line in reply.lines if line.message.get("stop_reason")]
    line = final[-1] if final else reply.lines[-1]
    model = line.message.get("model")
    return RecordedCall(
        usage=_usage(line.message.get("usage")),
        at=iso_time(reply.lines[0].data.get("timestamp")),
        model=model if isinstance(model, str) else None,
        output_final=bool(final),
    )


def _usage(raw: Any) -> BilledUsage | None:
    if not isinstance(raw, Mapping):
        return None
    written = count(raw, "cache_creation_input_tokens")
    split = raw.get("cache_creation")
    hour = count(split, "ephemeral_1h_input_tokens") if isinstance(split, Mapping) else 0
    if not written and isinstance(split, Mapping):
        written = hour + count(split, "ephemeral_5m_input_tokens")
    hour = min(hour, written)
    return BilledUsage(
        input_tokens=count(raw, "input_tokens"),
        cache_read_tokens=count(raw, "cache_read_input_tokens"),
        cache_write_tokens=written - hour,
        cache_write_1h_tokens=hour,
        output_tokens=count(raw, "output_tokens"),
    )
