"""Gemini ``contents`` read into the conversation's messages: what serve's Gemini API reads
from a client and the Gemini CLI importer reads from its saved chats, in one representation.

A model content is one assistant message (text joined, ``functionCall`` parts its calls); a
user content is a tool message per ``functionResponse`` part and a user message for its text.
What strategies have no field for (a ``thoughtSignature``, a thought, an image) is kept in the
message's layout (:mod:`~contextfold.core.wire.layout`); anything malformed is a
:class:`~contextfold.core.errors.MessageFormatError` naming the field.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from contextfold.core.errors import MessageFormatError
from contextfold.core.grouping import Labeled
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
)
from contextfold.core.parts import Part
from contextfold.core.wire.layout import layout_part, message_of, raw, template_of
from contextfold.core.wire.media import media_tokens

__all__ = ["API", "MINTED", "read_contents", "read_model", "read_system"]

API = "gemini"
MINTED = "gcall_"
"""How the ids the proxy gives calls that came without one begin (never sent to Gemini)."""


def read_system(raw_value: Any) -> SystemMessage | None:
    """``systemInstruction`` (a Content of text parts, or a string) as one system message."""
    if raw_value is None:
        return None
    if isinstance(raw_value, str):
        return SystemMessage(raw_value) if raw_value else None
    parts = raw_value.get("parts") if isinstance(raw_value, dict) else None
    if not isinstance(parts, list):
        raise bad("systemInstruction", "must be a Content with parts")
    run = _Run("user", "systemInstruction", True)
    for j, part in enumerate(parts):
        at = f"systemInstruction.parts[{j}]"
        if not isinstance(part, dict) or not isinstance(part.get("text"), str):
            raise bad(at, "a system instruction part must be a text part")
        if not part["text"]:
            raise bad(at, _EMPTY)
        _text(run, part)
    text = "".join(run.texts)
    if not text:
        return None
    if run.template == [{"text": len(text)}]:
        return SystemMessage(text)
    return SystemMessage(text, parts=(layout_part(API, run.template, text),))


@dataclass(slots=True)
class _Run:
    """The parts of one content that make one of the conversation's messages."""

    kind: str  # "user", "tool" or "assistant"
    label: str
    head: bool
    """Whether it starts a content."""
    template: list[Any] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    call_id: str = ""
    notes: dict[str, Any] = field(default_factory=dict)
    shown: list[str] = field(default_factory=list)
    tokens: int = 0


def read_contents(raw_value: Any) -> list[Labeled]:
    """``contents`` as labelled messages for the grouper; a :class:`MessageFormatError` naming
    the field for anything malformed. A call without an id gets one from its place (the same
    each time the client sends it); a response without an id answers the call of its name it
    follows."""
    if not isinstance(raw_value, list) or not raw_value:
        raise bad("contents", "must be a non-empty array of Content")
    runs: list[_Run] = []
    asked: list[ToolCall] = []  # the calls of the last model content not answered yet
    for i, content in enumerate(raw_value):
        where = f"contents[{i}]"
        parts = _parts(content, where)
        if content.get("role", "user") == "model":
            runs.append(_model_run(parts, where, _placed(i)))
            asked = list(runs[-1].calls)
        else:
            runs += _user_runs(parts, where, asked)
    return _labeled(runs)


def _placed(i: int) -> Callable[[int], str]:
    """The id of the ``k``-th call of content ``i`` that came without one."""
    return lambda k: f"{MINTED}{i}_{k}"


def _fresh(k: int) -> str:
    return MINTED + uuid.uuid4().hex[:16]


def read_model(parts: Any, where: str) -> AssistantMessage:
    """A model content's parts (a reply's) as one message; calls without an id get a new one."""
    if not isinstance(parts, list):
        raise bad(where, "must be an array of parts")
    run = _model_run(_checked(parts, where), where, _fresh)
    message = _message(run, default_head=True)
    assert isinstance(message, AssistantMessage)
    return message


def _parts(content: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(content, dict):
        raise bad(where, "a Content must be an object")
    role = content.get("role", "user")
    if role not in ("user", "model"):
        raise bad(f"{where}.role", f"must be 'user' or 'model', got {role!r}")
    parts = content.get("parts")
    if not isinstance(parts, list) or not parts:
        raise bad(f"{where}.parts", "must be a non-empty array of parts")
    return _checked(parts, where)


def _checked(parts: list[Any], where: str) -> list[dict[str, Any]]:
    for j, part in enumerate(parts):
        if not isinstance(part, dict):
            raise bad(f"{where}.parts[{j}]", "a part must be an object")
    return parts


def _model_run(parts: list[dict[str, Any]], where: str, mint: Callable[[int], str]) -> _Run:
    run = _Run("assistant", where, True)
    for j, part in enumerate(parts):
        if "functionCall" in part:
            k, at = len(run.calls), f"{where}.parts[{j}].functionCall"
            run.calls.append(_call(part["functionCall"], at, mint(k)))
            said = part.get("text") if not part.get("thought") else None
            if isinstance(said, str):  # a part of two data (Google sends one): both kept
                run.texts.append(said)
                run.template.append(template_of(part, "functionCall", call=k, text=len(said)))
            else:
                run.template.append(template_of(part, "functionCall", call=k))
        elif isinstance(part.get("text"), str) and not part.get("thought"):
            _text(run, part)
        else:
            _raw(run, part)
    return run


_ABOUT = frozenset({"text", "thought", "thoughtSignature", "videoMetadata", "mediaResolution",
                    "partMetadata"})  # fmt: skip
"""A part's fields that are not its datum (and ``text``, whose empty string is none)."""
_EMPTY = "is an empty part (no data, or an empty text), which Gemini refuses; leave it out"


def _user_runs(parts: list[dict[str, Any]], where: str, asked: list[ToolCall]) -> list[_Run]:
    runs: list[_Run] = []
    for j, part in enumerate(parts):
        at = f"{where}.parts[{j}]"
        if set(part) <= _ABOUT and not part.get("text"):
            raise bad(at, _EMPTY)
        if "functionResponse" in part:
            runs.append(_result(part, at, asked, head=not runs))
            continue
        if not runs or runs[-1].kind != "user":
            runs.append(_Run("user", at, not runs))
        if isinstance(part.get("text"), str):
            _text(runs[-1], part)
        else:
            _raw(runs[-1], part)
    return runs


def _call(value: Any, at: str, minted: str) -> ToolCall:
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or not value["name"]:
        raise bad(f"{at}.name", "a function call needs the function's name")
    args = value.get("args", {})
    if not isinstance(args, dict):
        raise bad(f"{at}.args", "must be an object")
    call_id = value.get("id")
    call_id = call_id if isinstance(call_id, str) and call_id else minted
    return ToolCall(call_id, value["name"], json.dumps(args, ensure_ascii=False))


def _result(part: dict[str, Any], at: str, asked: list[ToolCall], *, head: bool) -> _Run:
    value = part["functionResponse"]
    where = f"{at}.functionResponse"
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise bad(f"{where}.name", "a function response needs the function's name")
    given, name = value.get("id"), value["name"]
    match = [c for c in asked if c.id == given] or [c for c in asked if c.name == name]
    if not match:
        raise bad(where, f"answers no function call of the model content before it ({name!r})")
    asked.remove(match[0])
    run = _Run("tool", at, head, call_id=match[0].id)
    response = value.get("response", {})
    output = response.get("output") if isinstance(response, dict) else None
    if isinstance(output, str) and list(response) == ["output"]:
        run.texts.append(output)
    else:
        run.texts.append(json.dumps(response, ensure_ascii=False))
        run.notes["json"] = True
    extra = {k: v for k, v in value.items() if k not in ("id", "name", "response")}
    others = {k: v for k, v in part.items() if k != "functionResponse"}
    if extra or others:
        run.notes["extra"] = [extra, others]
    return run


def _text(run: _Run, part: dict[str, Any]) -> None:
    text = part["text"]
    run.texts.append(text)
    run.template.append(template_of(part, text=len(text)))


def _raw(run: _Run, part: dict[str, Any]) -> None:
    run.template.append(raw(part))
    if part.get("thought") and isinstance(part.get("text"), str):
        run.shown.append(part["text"])
        return
    media = part.get("inlineData")
    if isinstance(media, dict) or "fileData" in part:
        run.tokens += media_tokens(media.get("data") if isinstance(media, dict) else None)
        run.shown.append("[media]")
        return
    kept = {k: v for k, v in part.items() if k != "thoughtSignature"}
    run.shown.append(json.dumps(kept, ensure_ascii=False, sort_keys=True))


def _default_head(kind: str, before: str) -> bool:
    """Whether a message starts a content of its own when written with no note: calls' and
    responses' runs join the one before of their kind, every other message starts one."""
    return not (kind == before and kind in ("tool", "assistant"))


def _labeled(runs: list[_Run]) -> list[Labeled]:
    out: list[Labeled] = []
    before = ""
    for run in runs:
        out.append((run.label, _message(run, default_head=_default_head(run.kind, before))))
        before = run.kind
    return out


def _message(run: _Run, *, default_head: bool) -> Message:
    text = "".join(run.texts)
    notes = dict(run.notes)
    if run.head != default_head:
        notes["head"] = run.head
    parts: tuple[Part, ...] = ()
    if notes or run.template != _canonical(run, text):
        shown = "\n".join(run.shown)
        parts = (layout_part(API, run.template, text, shown=shown, tokens=run.tokens, **notes),)
    return message_of(run.kind, text, run.calls, run.call_id, parts)


def _canonical(run: _Run, text: str) -> list[Any]:
    """The template the writer makes of a message with no layout."""
    if run.kind == "tool":
        return []
    head: list[Any] = [{"text": len(text)}] if text else []
    return head + [{"$call": k} for k in range(len(run.calls))]


def bad(where: str, problem: str) -> MessageFormatError:
    return MessageFormatError(problem, at=where)
