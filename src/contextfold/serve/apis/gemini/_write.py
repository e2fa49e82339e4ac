"""A view written as Gemini ``contents`` and a ``systemInstruction``.

Each message is written from its layout when it carries one (the client's own parts, a
``thoughtSignature`` where it was), else the canonical way: a text part, then a
``functionCall`` part per call; a tool result as a ``functionResponse`` named after its call.
To an upstream, ids the proxy made are left out, and a model content whose first call has no
signature gets the documented ``skip_thought_signature_validator``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from contextfold.core.wire.layout import fill, layout_of, placed_calls
from contextfold.serve.apis.gemini._media import foreign_media
from contextfold.serve.apis.gemini._read import API, MINTED
from contextfold.serve.edge.body import NotPortable, strict_json

__all__ = ["SKIP_SIGNATURE", "model_parts", "write_contents"]

SKIP_SIGNATURE = "skip_thought_signature_validator"
"""The signature Gemini documents for a call whose own is not known."""


def write_contents(
    messages: Sequence[Message], *, client: bool = False
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The view ``messages`` (system first, if any) as ``systemInstruction`` and ``contents``
    (``client``: for a Gemini client, else for an upstream). Calls' and responses' runs share
    one content; a message that began a content of its own begins one again."""
    system: dict[str, Any] | None = None
    contents: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    before = ""
    for message in messages:
        if isinstance(message, SystemMessage):
            system = {"parts": _user_parts(message)}
            continue
        kind = "assistant" if isinstance(message, AssistantMessage) else message.role
        if isinstance(message, AssistantMessage):
            names.update((c.id, c.name) for c in message.tool_calls)
            parts = model_parts(message, client=client)
        elif isinstance(message, ToolMessage):
            parts = [_response(message, names, client=client), *foreign_media(message)]
        else:
            parts = [*_user_parts(message), *foreign_media(message)]
        if not parts:
            continue
        layout = layout_of(message, API) or {}
        role = "model" if kind == "assistant" else "user"
        default = not (kind == before and kind in ("tool", "assistant"))
        if layout.get("head", default) or not contents or contents[-1]["role"] != role:
            contents.append({"role": role, "parts": []})
        contents[-1]["parts"].extend(parts)
        before = kind
    if not client:
        for content in contents:
            _sign(content)
    return system, contents


def model_parts(message: AssistantMessage, *, client: bool) -> list[dict[str, Any]]:
    """An assistant message's parts (its calls as ``functionCall`` parts)."""
    text, calls = message.content or "", message.tool_calls
    layout = layout_of(message, API)

    def build(call: ToolCall, extra: dict[str, Any]) -> dict[str, Any]:
        return {"functionCall": _call(call, client=client), **extra}

    if layout is None:
        head = [{"text": text}] if text else []
        return head + [build(c, {}) for c in calls]
    filled = [p for p in fill(layout, text, calls, build) if p is not None]
    kept = [p for p in filled if p.get("text") != "" or len(p) > 1]
    if text and not any("text" in p and not p.get("thought") for p in kept):
        kept.insert(0, {"text": text})
    return kept + [build(c, {}) for c in calls[placed_calls(layout["t"]) :]]


def _call(call: ToolCall, *, client: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": call.name, "args": _args(call.arguments)}
    if client or not call.id.startswith(MINTED):
        out = {"id": call.id, **out}
    return out


def _args(arguments: str) -> dict[str, Any]:
    """A call's arguments as the object ``args`` must be (other text kept under
    ``arguments``)."""
    try:
        value = strict_json(arguments or "{}")
    except NotPortable:
        return {"arguments": arguments}
    return value if isinstance(value, dict) else {"arguments": arguments}


def _response(message: ToolMessage, names: dict[str, str], *, client: bool) -> dict[str, Any]:
    layout = layout_of(message, API) or {}
    response: Any = {"output": message.content}
    if layout.get("json"):
        try:
            value = json.loads(message.content)
            response = value if isinstance(value, dict) else response
        except ValueError:
            pass  # the strategy rewrote it (a stub): its text is the output
    named: dict[str, Any] = {"name": names.get(message.tool_call_id, "function")}
    if client or not message.tool_call_id.startswith(MINTED):
        named = {"id": message.tool_call_id, **named}
    extra, others = layout.get("extra") or ({}, {})
    return {"functionResponse": {**named, "response": response, **extra}, **others}


def _user_parts(message: Message) -> list[dict[str, Any]]:
    layout = layout_of(message, API)
    text = message.content or ""
    if layout is None:
        return [{"text": text}] if text else []
    parts = [p for p in fill(layout, text, (), _no_call) if p.get("text") != ""]
    if text and not any("text" in p for p in parts):
        parts.insert(0, {"text": text})
    return parts


def _sign(content: dict[str, Any]) -> None:
    """The first call of a model content signed (by :data:`SKIP_SIGNATURE` if it is not)."""
    if content["role"] != "model":
        return
    calls = [p for p in content["parts"] if "functionCall" in p]
    if calls and "thoughtSignature" not in calls[0]:
        calls[0]["thoughtSignature"] = SKIP_SIGNATURE


def _no_call(call: ToolCall, extra: dict[str, Any]) -> dict[str, Any]:
    raise AssertionError("a user message holds no calls")
