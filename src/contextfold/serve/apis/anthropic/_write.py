"""A view written as Anthropic Messages: the ``system`` parameter and the ``messages``.

Each message is written from its layout when it carries one (:mod:`~contextfold.core.wire.layout`:
the client's blocks, the kept ones verbatim), else the canonical way: a text block, then a
``tool_use`` block per call; a tool result as a ``tool_result`` block. Tool results and the user
text after them share one user message; a message that began a client message begins one again.
:class:`Written` says where each view message's blocks went, for the breakpoints (:mod:`._cache`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from contextfold.core.wire.layout import fill, layout_of, placed_calls
from contextfold.serve.edge.body import NotPortable, strict_json

__all__ = ["API", "Written", "assistant_blocks", "tool_input", "write_view"]

API = "anthropic"


@dataclass(slots=True)
class Written:
    """A view as Anthropic parameters, and where each view message's blocks are."""

    system: str | list[dict[str, Any]] | None
    messages: list[dict[str, Any]] = field(default_factory=list)
    places: list[list[tuple[int, int]]] = field(default_factory=list)
    """Per view message: the (message, block) of each of its blocks (the system: (-1, i))."""


def write_view(messages: Sequence[Message]) -> Written:
    """The view ``messages`` (system first, if any) as Anthropic parameters."""
    out = Written(None)
    side = ""
    for message in messages:
        if isinstance(message, SystemMessage):
            out.system = _system(message)
            count = 1 if isinstance(out.system, str) else len(out.system)
            out.places.append([(-1, i) for i in range(count)])
            continue
        layout = layout_of(message, API) or {}
        blocks = _blocks(message, layout)
        kind = "assistant" if isinstance(message, AssistantMessage) else "user"
        kind = layout.get("role", kind)
        if not blocks:
            out.places.append([])
            continue
        if layout.get("head", kind != side) or not out.messages or kind != side:
            out.messages.append({"role": kind, "content": []})
        content = out.messages[-1]["content"]
        out.places.append([(len(out.messages) - 1, len(content) + i) for i in range(len(blocks))])
        content.extend(blocks)
        side = kind
    return out


def _system(message: SystemMessage) -> str | list[dict[str, Any]]:
    layout = layout_of(message, API)
    if layout is None:
        return message.content
    blocks = fill(layout, message.content, (), _no_call)
    return [b for b in blocks if b.get("text")] or message.content


def _blocks(message: Message, layout: dict[str, Any]) -> list[dict[str, Any]]:
    if isinstance(message, AssistantMessage):
        return assistant_blocks(message, layout)
    if isinstance(message, ToolMessage):
        return _result_blocks(message, layout)
    if not layout:
        return [{"type": "text", "text": message.content}] if message.content else []
    return _clean(fill(layout, message.content, (), _no_call), message.content)


def assistant_blocks(message: AssistantMessage, layout: dict[str, Any]) -> list[dict[str, Any]]:
    """An assistant message's content blocks (its calls as ``tool_use`` blocks)."""
    text, calls = message.content or "", message.tool_calls
    if not layout:
        head = [{"type": "text", "text": text}] if text else []
        return head + [_tool_use(c, {"type": "tool_use"}) for c in calls]
    blocks = _clean(fill(layout, text, calls, _tool_use), text)
    placed = placed_calls(layout["t"])
    return blocks + [_tool_use(c, {"type": "tool_use"}) for c in calls[placed:]]


def _result_blocks(message: ToolMessage, layout: dict[str, Any]) -> list[dict[str, Any]]:
    if not layout:
        block = {"type": "tool_result", "tool_use_id": message.tool_call_id}
        return [{**block, "content": message.content}]
    blocks = [b for b in fill(layout, message.content, (), _no_call) if b is not None]
    for block in blocks:
        if block.get("type") == "tool_result":
            block["tool_use_id"] = message.tool_call_id
            if isinstance(block.get("content"), list):
                block["content"] = [b for b in block["content"] if b.get("text") != ""]
            break
    return blocks


def _clean(blocks: list[Any], text: str) -> list[dict[str, Any]]:
    """The filled blocks without empty text blocks (the API refuses them) and emptied calls;
    the text in a block of its own first when the layout had no place for it."""
    kept = [b for b in blocks if b is not None and not (b.get("type") == "text" and not b["text"])]
    has_text = any(b.get("type") == "text" for b in kept)
    if text and not has_text:
        kept.insert(0, {"type": "text", "text": text})
    return kept


def _tool_use(call: ToolCall, extra: dict[str, Any]) -> dict[str, Any]:
    return {**extra, "id": call.id, "name": call.name, "input": tool_input(call.arguments)}


def tool_input(arguments: str) -> dict[str, Any]:
    """A call's arguments as the object ``input`` must be (text that is not a JSON object the
    proxy can pass on, as a model may write, is kept under ``arguments``)."""
    try:
        value = strict_json(arguments or "{}")
    except NotPortable:
        return {"arguments": arguments}
    return value if isinstance(value, dict) else {"arguments": arguments}


def _no_call(call: ToolCall, extra: dict[str, Any]) -> dict[str, Any]:
    raise AssertionError("a user message holds no calls")
