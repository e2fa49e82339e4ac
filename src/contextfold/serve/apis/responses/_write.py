"""A view written as OpenAI Responses input items (and ``instructions``).

Each message is written from its layout when it carries one
(:mod:`~contextfold.core.wire.layout`: the client's own items, reasoning and the rest verbatim),
else the canonical way: a user ``message`` item with ``input_text``; the assistant's ``message``
with ``output_text``, then a ``function_call`` per call (a ``custom_tool_call`` for a tool the
client declared custom); a tool result as the output item its call takes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.core.wire.layout import fill, layout_of, placed_calls
from contextfold.serve.edge.body import NotPortable, strict_json

__all__ = ["API", "assistant_items", "call_item", "write_input"]

API = "responses"
_OUTPUT_OF = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "local_shell_call": "local_shell_call_output",
}


def write_input(
    messages: Sequence[Message], kinds: Mapping[str, str] | None = None
) -> tuple[str | None, list[dict[str, Any]]]:
    """``instructions`` and ``input`` of the view ``messages`` (system first, if any);
    ``kinds`` names the item type of the calls of tools whose calls are not function calls."""
    custom = kinds or {}
    instructions: str | None = None
    items: list[dict[str, Any]] = []
    made_by: dict[str, str] = {}  # call id -> the type of the item that made the call
    for message in messages:
        if isinstance(message, SystemMessage):
            instructions = _system(message, items)
        elif isinstance(message, AssistantMessage):
            made = assistant_items(message, custom)
            made_by.update({i["call_id"]: i["type"] for i in made if i.get("type") in _OUTPUT_OF})
            items.extend(made)
        elif isinstance(message, ToolMessage):
            kind = made_by.get(message.tool_call_id, "function_call")
            items.extend(_output_items(message, kind))
        else:
            items.extend(_user_items(message))
    return instructions, items


def assistant_items(message: AssistantMessage, custom: Mapping[str, str]) -> list[dict[str, Any]]:
    """An assistant message's output items."""
    text, calls = message.content or "", message.tool_calls
    layout = layout_of(message, API)
    if layout is None:
        return _canonical_text(text) + [_call(c, _kind(c, custom), {}) for c in calls]
    items = _clean(fill(layout, text, calls, lambda c, e: _call(c, e.get("type", ""), e)))
    if text and not any(i.get("type") == "message" for i in items):
        items[:0] = _canonical_text(text)
    return items + [_call(c, _kind(c, custom), {}) for c in calls[placed_calls(layout["t"]) :]]


def _system(message: SystemMessage, items: list[dict[str, Any]]) -> str | None:
    """The system prompt as ``instructions``, or, when it came as an input item, put back
    where it came (first in ``items``) and None."""
    layout = layout_of(message, API)
    if layout is None:
        return message.content
    items.extend(_clean(fill(layout, message.content, (), _no_call)))
    return None


def _user_items(message: UserMessage) -> list[dict[str, Any]]:
    layout = layout_of(message, API)
    if layout is None:
        part = {"type": "input_text", "text": message.content}
        return [{"type": "message", "role": "user", "content": [part]}]
    return _clean(fill(layout, message.content, (), _no_call))


def _output_items(message: ToolMessage, made_by: str) -> list[dict[str, Any]]:
    layout = layout_of(message, API)
    if layout is None:
        kind = _OUTPUT_OF.get(made_by, "function_call_output")
        return [{"type": kind, "call_id": message.tool_call_id, "output": message.content}]
    items = _clean(fill(layout, message.content, (), _no_call))
    for item in items:
        if item.get("type") in _OUTPUT_OF.values() or item.get("type") == "local_shell_call_output":
            key = "id" if item["type"] == "local_shell_call_output" and "id" in item else "call_id"
            item[key] = message.tool_call_id
            break
    return items


def _canonical_text(text: str) -> list[dict[str, Any]]:
    if not text:
        return []
    part = {"type": "output_text", "text": text, "annotations": []}
    return [{"type": "message", "role": "assistant", "content": [part]}]


def call_item(call: ToolCall, custom: Mapping[str, str]) -> dict[str, Any]:
    """The item of one call made (a ``custom_tool_call`` for a custom tool)."""
    return _call(call, _kind(call, custom), {})


def _kind(call: ToolCall, kinds: Mapping[str, str]) -> str:
    return kinds.get(call.name, "function_call")


def _call(call: ToolCall, kind: str, extra: dict[str, Any]) -> dict[str, Any]:
    out = {**extra, "type": kind or "function_call", "call_id": call.id}
    if kind == "local_shell_call":
        return {**out, "action": _action(call.arguments)}
    if kind == "custom_tool_call":
        return {**out, "name": call.name, "input": call.arguments}
    return {**out, "name": call.name, "arguments": call.arguments}


def _action(arguments: str) -> Any:
    try:
        return strict_json(arguments)
    except NotPortable:
        return {"type": "exec", "command": [arguments]}


def _clean(items: list[Any]) -> list[dict[str, Any]]:
    """Filled items without emptied calls, empty text parts, or messages left with nothing."""
    out = []
    for item in items:
        if item is None:
            continue
        content = item.get("content")
        if isinstance(content, list) and item.get("type", "message") == "message":
            kept = [p for p in content if not (p.get("type") in _TEXT and p.get("text") == "")]
            if not kept:
                continue
            item = {**item, "content": kept}
        out.append(item)
    return out


_TEXT = {"input_text", "output_text"}


def _no_call(call: ToolCall, extra: dict[str, Any]) -> dict[str, Any]:
    raise AssertionError("only an assistant message holds calls")
