"""Anthropic Messages content read into the conversation's messages: what serve's Anthropic API
reads from a client and the Claude Code importer reads from its logs, in one representation.

Strategies see only the four message kinds; every block they have no field for is kept in the
message's layout (:mod:`~contextfold.core.wire.layout`), so serve writes the message back as it
came, and the ``cache_control`` markers are kept apart (:class:`Markers`). Anything malformed is a
:class:`~contextfold.core.errors.MessageFormatError` naming the field (serve answers it as a 400).
"""

from __future__ import annotations

import json
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

__all__ = ["API", "Marker", "Markers", "read_assistant", "read_messages", "read_system"]

API = "anthropic"
_MEDIA = {"image", "document"}

Marker = tuple[int, dict[str, Any]]
"""A marker: the block of its message it is on, and its ``cache_control`` value."""


@dataclass(slots=True)
class Markers:
    """The ``cache_control`` markers met while reading: on system blocks (by index), and on each
    message read (by the message's ``id()``: a caller keys them by place once it has grouped)."""

    system: list[Marker] = field(default_factory=list)
    messages: dict[int, list[Marker]] = field(default_factory=dict)


def read_system(raw: Any, marks: Markers | None = None) -> SystemMessage | None:
    """The ``system`` parameter (a string or text blocks) as one system message."""
    if raw is None or raw == "" or raw == []:
        return None
    if isinstance(raw, str):
        return SystemMessage(raw)
    if not isinstance(raw, list):
        raise _bad("system", "must be a string or an array of text blocks")
    texts, template = [], []
    marks = Markers() if marks is None else marks
    for i, block in enumerate(raw):
        where = f"system.{i}"
        if not isinstance(block, dict) or block.get("type") != "text":
            raise _bad(where, "a system block must be a text block")
        text = _string(block.get("text"), f"{where}.text")
        if "cache_control" in block:
            marks.system.append((i, _marker(block["cache_control"], f"{where}.cache_control")))
        texts.append(text)
        template.append(template_of(block, "cache_control", text=len(text)))
    content = "".join(texts)
    if template == [{"type": "text", "text": len(content)}]:
        return SystemMessage(content)
    return SystemMessage(content, parts=(layout_part(API, template, content),))


@dataclass(slots=True)
class _Run:
    """The blocks of one client message that make one of the conversation's messages."""

    kind: str  # "user", "tool" or "assistant"
    label: str
    head: bool
    """Whether it starts a client message."""
    role: str = ""
    """A role other than its kind's (``system``), written back."""
    template: list[Any] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    call_id: str = ""
    shown: list[str] = field(default_factory=list)
    tokens: int = 0
    marks: list[tuple[int, dict[str, Any]]] = field(default_factory=list)


def read_messages(raw: Any, marks: Markers | None = None) -> list[Labeled]:
    """The ``messages`` parameter as labelled messages for the grouper; a 400 naming the
    field for anything malformed.

    Each client message's blocks become messages of the four kinds: an assistant message is one
    :class:`~contextfold.core.messages.AssistantMessage` (text joined, ``tool_use`` blocks its
    calls); a user message is a :class:`~contextfold.core.messages.ToolMessage` per
    ``tool_result`` block and a :class:`~contextfold.core.messages.UserMessage` for its text.
    Every other block (thinking and redacted thinking with their signatures, server tool use and
    its results, images, documents) is kept whole, in place, in the message's layout
    (:mod:`~contextfold.core.wire.layout`), so the message can be written back as it came.
    The ``cache_control`` markers are not part of a message (a client moves them from turn to
    turn): they are taken out and kept apart in ``marks``, by message and block.
    """
    if not isinstance(raw, list) or not raw:
        raise _bad("messages", "must be a non-empty array of messages")
    runs: list[_Run] = []
    for i, message in enumerate(raw):
        where = f"messages.{i}"
        if not isinstance(message, dict):
            raise _bad(where, "a message must be an object")
        role, content = message.get("role"), message.get("content")
        if role not in ("user", "assistant", "system"):
            raise _bad(f"{where}.role", f"must be 'user' or 'assistant', got {role!r}")
        if isinstance(content, str):  # a string is one text block, as the API reads it
            blocks = [{"type": "text", "text": content}]
        elif isinstance(content, list):
            blocks = content
        else:
            raise _bad(f"{where}.content", "must be a string or an array of content blocks")
        new = _assistant(blocks, where) if role == "assistant" else _user(blocks, where)
        if role == "system":  # Claude Code's per-turn context, under a beta: a user message
            for run in new:  # of the conversation, written back with its own role
                run.kind, run.role = "user", "system"
        runs.extend(new)
    return _messages(runs, Markers() if marks is None else marks)


def read_assistant(blocks: Any, where: str) -> AssistantMessage:
    """An assistant message's content blocks (a reply's ``content``) as one message."""
    if not isinstance(blocks, list):
        raise _bad(where, "must be an array of content blocks")
    message = _message(_assistant(blocks, where)[0], default_head=True)
    assert isinstance(message, AssistantMessage)
    return message


def _assistant(blocks: list[Any], where: str) -> list[_Run]:
    run = _Run("assistant", where, True)
    for j, block in enumerate(_blocks(blocks, where)):
        at = f"{where}.content.{j}"
        kind = block["type"]
        if kind == "text":
            _text(run, block, at)
        elif kind == "tool_use":
            taken = ("id", "name", "input", "cache_control")
            run.template.append(template_of(block, *taken, call=len(run.calls)))
            run.calls.append(_call(block, at))
        else:
            _raw(run, block)
        _mark(run, block, at)
    return [run]


def _user(blocks: list[Any], where: str) -> list[_Run]:
    runs: list[_Run] = []
    waiting: list[tuple[dict[str, Any], str]] = []  # kept blocks before any text or result
    for j, block in enumerate(_blocks(blocks, where)):
        at = f"{where}.content.{j}"
        kind = block["type"]
        if kind == "tool_result":
            runs.append(_result(block, at, head=not runs))
        elif kind == "text":
            if not runs or runs[-1].kind != "user":
                runs.append(_Run("user", at, not runs))
            _said(block.get("text"), f"{at}.text")
            _text(runs[-1], block, at)
        elif runs:
            _raw(runs[-1], block)
        else:
            waiting.append((block, at))
            continue
        if waiting:
            _put_first(runs[-1], waiting)
            waiting = []
        _mark(runs[-1], block, at)
    if waiting or not runs:  # only kept blocks (an image alone), or no block at all
        runs.append(_Run("user", where, True))
        _put_first(runs[-1], waiting)
    return runs


def _said(text: Any, where: str) -> None:
    """A user's text block must say something, as Anthropic requires (its messages)."""
    if text == "":
        raise _bad(where, "text content blocks must be non-empty")
    if isinstance(text, str) and not text.strip():
        raise _bad(where, "text content blocks must contain non-whitespace text")


def _put_first(run: _Run, waiting: list[tuple[dict[str, Any], str]]) -> None:
    """Kept blocks that came before the run's first block, put before it."""
    moved = len(waiting)
    run.template[:0] = [raw(_plain(b)) for b, _ in waiting]
    run.marks = [(i + moved, m) for i, m in run.marks]
    for i, (block, at) in enumerate(waiting):
        _shown(run, block)
        if "cache_control" in block:
            run.marks.insert(i, (i, _marker(block["cache_control"], f"{at}.cache_control")))


def _result(block: dict[str, Any], at: str, *, head: bool) -> _Run:
    run = _Run("tool", at, head)
    call_id = block.get("tool_use_id")
    if not isinstance(call_id, str) or not call_id:
        raise _bad(f"{at}.tool_use_id", "a tool_result needs the id of the tool_use it answers")
    run.call_id = call_id
    content = block.get("content", "")
    place: int | list[Any]
    if isinstance(content, str):
        run.texts.append(content)
        place = len(content)
    elif isinstance(content, list):
        inner = []
        for k, item in enumerate(_blocks(content, f"{at}.content")):
            if item["type"] == "text":
                text = _string(item.get("text"), f"{at}.content.{k}.text")
                run.texts.append(text)
                inner.append(template_of(item, "cache_control", text=len(text)))
            else:
                inner.append(raw(_plain(item)))
                _shown(run, item)
        place = inner
    else:
        raise _bad(f"{at}.content", "must be a string or an array of text and image blocks")
    run.template.append(template_of(block, "tool_use_id", "cache_control", content=place))
    return run


def _blocks(blocks: list[Any], where: str) -> list[dict[str, Any]]:
    for j, block in enumerate(blocks):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise _bad(f"{where}.content.{j}", "a content block must be an object with a 'type'")
    return blocks


def _text(run: _Run, block: dict[str, Any], at: str) -> None:
    text = _string(block.get("text"), f"{at}.text")
    run.texts.append(text)
    run.template.append(template_of(block, "cache_control", text=len(text)))  # citations kept


def _raw(run: _Run, block: dict[str, Any]) -> None:
    run.template.append(raw(_plain(block)))
    _shown(run, block)


def _shown(run: _Run, block: dict[str, Any]) -> None:
    """What a kept block adds to its message's text (counted) or tokens (media)."""
    kind = block["type"]
    if kind in _MEDIA:
        source = block.get("source")
        data = source.get("data") if isinstance(source, dict) else None
        run.tokens += media_tokens(data)
        run.shown.append(f"[{kind}]")
    elif kind == "thinking":
        run.shown.append(str(block.get("thinking", "")))
    else:
        run.shown.append(json.dumps(_plain(block), ensure_ascii=False, sort_keys=True))


def _mark(run: _Run, block: dict[str, Any], at: str) -> None:
    if "cache_control" in block:
        marker = _marker(block["cache_control"], f"{at}.cache_control")
        run.marks.append((len(run.template) - 1, marker))


def _call(block: dict[str, Any], at: str) -> ToolCall:
    call_id, name, arguments = block.get("id"), block.get("name"), block.get("input", {})
    if not isinstance(call_id, str) or not call_id:
        raise _bad(f"{at}.id", "a tool_use block needs a string id")
    if not isinstance(name, str) or not name:
        raise _bad(f"{at}.name", "a tool_use block needs the tool's name")
    if not isinstance(arguments, dict):
        raise _bad(f"{at}.input", "must be an object")
    return ToolCall(call_id, name, json.dumps(arguments, ensure_ascii=False))


def _messages(runs: list[_Run], marks: Markers) -> list[Labeled]:
    out: list[Labeled] = []
    side = ""
    for run in runs:
        now = run.role or ("assistant" if run.kind == "assistant" else "user")
        message = _message(run, default_head=now != side)
        side = now
        if run.marks:
            marks.messages[id(message)] = run.marks
        out.append((run.label, message))
    return out


def _message(run: _Run, *, default_head: bool) -> Message:
    text = "".join(run.texts)
    more: dict[str, Any] = {} if run.head == default_head else {"head": run.head}
    if run.role:
        more["role"] = run.role
    parts: tuple[Part, ...] = ()
    if more or run.template != _canonical(run, text):
        shown = "\n".join(run.shown)
        parts = (layout_part(API, run.template, text, shown=shown, tokens=run.tokens, **more),)
    return message_of(run.kind, text, run.calls, run.call_id, parts)


def _canonical(run: _Run, text: str) -> list[Any]:
    """The template the writer makes of a message with no layout."""
    if run.kind == "tool":
        return [{"type": "tool_result", "content": len(text)}]
    head: list[Any] = [{"type": "text", "text": len(text)}] if text else []
    return head + [{"type": "tool_use", "$call": k} for k in range(len(run.calls))]


def _plain(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "cache_control"}


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _bad(where, "must be a string")
    return value


def _marker(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict) or value.get("type") != "ephemeral":
        raise _bad(where, "must be {'type': 'ephemeral'} (with an optional 'ttl')")
    return value


def _bad(where: str, problem: str) -> MessageFormatError:
    return MessageFormatError(problem, at=where)
