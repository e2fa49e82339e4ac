"""Helpers the model backends share: the error class, lazy imports, reply coercion, and the JSON
tool-call protocol for models without native tool calling.

The protocol is one JSON object a reply, ``{"tool": <name>, "arguments": {...}}`` or
``{"message": <text>}``, which a grammar can force (:func:`json_reply_schema`).
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any, TypeAlias

from contextfold.core.errors import MessageFormatError, ModelError
from contextfold.core.messages import AssistantMessage, ToolCall, from_openai

__all__ = [
    "ModelError",
    "Reply",
    "import_optional",
    "json_reply_schema",
    "parse_json_reply",
    "render_json_reply",
    "to_assistant",
    "tool_call",
    "tool_name",
    "tools_prompt",
]

Reply: TypeAlias = AssistantMessage | str | Mapping[str, Any]
"""A scripted reply: a message, plain text, or an OpenAI-format assistant dict."""


def import_optional(module: str, *, hint: str, what: str) -> ModuleType:
    """Import an optional dependency, or raise :class:`ModelError` saying how to install it."""
    try:
        return importlib.import_module(module)
    except (ImportError, OSError, RuntimeError) as exc:  # absent, or its native library fails
        raise ModelError(f"{what} needs the {module!r} package: {hint} ({exc})") from exc


def tool_call(
    name: str, arguments: Mapping[str, Any] | str = "{}", *, call_id: str = "call_0"
) -> AssistantMessage:
    """An assistant message making one tool call.

    ``arguments`` given as a string is kept verbatim, so a script can send malformed JSON
    (``tool_call("search", "{not json")``) to exercise an agent's error handling.
    """
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return AssistantMessage(None, tool_calls=(ToolCall(call_id, name, text),))


def to_assistant(reply: Reply, *, position: int) -> AssistantMessage:
    """Coerce a reply to an :class:`AssistantMessage`; ``position`` names it in errors.

    Dicts are OpenAI chat format; ``role`` defaults to assistant and a tool call without an
    ``id`` gets ``call_<position>_<i>``. Arguments strings pass through untouched.
    """
    if isinstance(reply, AssistantMessage):
        return reply
    if isinstance(reply, str):
        return AssistantMessage(reply)
    if not isinstance(reply, Mapping):
        raise ModelError(
            f"reply #{position} is a {type(reply).__name__}; "
            "give an AssistantMessage, a str or an OpenAI assistant dict"
        )
    data = dict(reply)
    data.setdefault("role", "assistant")
    calls = data.get("tool_calls")
    if isinstance(calls, list):
        data["tool_calls"] = [_with_id(c, f"call_{position}_{i}") for i, c in enumerate(calls)]
    try:
        message = from_openai(data)
    except MessageFormatError as exc:
        raise ModelError(f"reply #{position} is not a valid assistant message: {exc}") from exc
    if not isinstance(message, AssistantMessage):
        raise ModelError(f"reply #{position} has role {message.role!r}; expected assistant")
    return message


def _with_id(call: Any, default: str) -> Any:
    if isinstance(call, Mapping) and "id" not in call:
        return {**call, "id": default}
    return call


# --------------------------------------------------------------------------- JSON tool calls


def tool_name(tool: Mapping[str, Any]) -> str:
    """The function name of an OpenAI tool schema."""
    name: str = _function(tool)["name"]
    return name


def _function(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    """The ``function`` part of an OpenAI tool schema (a bare function schema is accepted)."""
    fn = tool.get("function", tool)
    if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
        raise ModelError(f"tool schema has no function name: {dict(tool)!r:.120}")
    return fn


def _parameters(fn: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's parameters schema, ``$ref`` to its own ``$defs`` inlined (grammar converters
    resolve refs from the root of the whole schema only); objects are closed unless they say
    otherwise."""
    params = dict(fn.get("parameters") or {"type": "object", "properties": {}})
    defs = params.pop("$defs", None) or params.pop("definitions", None) or {}
    params = dict(_inline(params, defs, depth=0))
    if params.get("type") == "object" and "properties" in params:
        params.setdefault("additionalProperties", False)
    return params


def _inline(node: Any, defs: Mapping[str, Any], *, depth: int) -> Any:
    """``node`` with every local ``$ref`` replaced by its definition (recursion is refused)."""
    if depth > 32:
        raise ModelError("tool schema nests $ref deeper than 32 levels (recursive definitions?)")
    if isinstance(node, Mapping):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(("#/$defs/", "#/definitions/")):
            name = ref.rsplit("/", 1)[1]
            if name not in defs:
                raise ModelError(f"tool schema refers to {ref!r}, which it does not define")
            merged = {**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}
            return _inline(merged, defs, depth=depth + 1)
        return {k: _inline(v, defs, depth=depth + 1) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, defs, depth=depth + 1) for v in node]
    return node


def json_reply_schema(
    tools: Sequence[Mapping[str, Any]], *, allow_message: bool = True
) -> dict[str, Any]:
    """The JSON schema of a reply: one tool call with valid arguments, or (if allowed) a message.

    With it, :func:`tools_prompt` describes the tools to the model, :func:`parse_json_reply` turns
    its output into an :class:`~contextfold.core.messages.AssistantMessage` and
    :func:`render_json_reply` writes an assistant message back in the same form, so the history
    reads like the model's own output.
    """
    options: list[dict[str, Any]] = []
    for tool in tools:
        fn = _function(tool)
        options.append(
            {
                "type": "object",
                "properties": {"tool": {"const": fn["name"]}, "arguments": _parameters(fn)},
                "required": ["tool", "arguments"],
                "additionalProperties": False,
            }
        )
    if allow_message:
        options.append(
            {
                "type": "object",
                "properties": {"message": {"type": "string"}},
                "required": ["message"],
                "additionalProperties": False,
            }
        )
    return {"anyOf": options}


def tools_prompt(tools: Sequence[Mapping[str, Any]], *, allow_message: bool = True) -> str:
    """Text for the system prompt: the tools, and how to call one (or reply)."""
    lines = ["You can call these tools:"]
    for tool in tools:
        fn = _function(tool)
        params = json.dumps(_parameters(fn), ensure_ascii=False)
        lines.append(f"- {fn['name']}: {fn.get('description', '')} Arguments: {params}")
    call = 'one JSON object: {"tool": <tool name>, "arguments": {...}} to call a tool'
    reply = ', or {"message": <text>} to reply to the user' if allow_message else ""
    lines.append(f"Answer with {call}{reply}.")
    return "\n".join(lines)


def parse_json_reply(text: str, *, call_id: str) -> AssistantMessage:
    """The reply a JSON object stands for.

    A ``{"message": ...}`` cut off by ``max_tokens`` yields the text written so far; anything
    else that is not a protocol object (e.g. a cut-off tool call) stays plain text.
    """
    try:
        data = json.loads(text, strict=False)  # the grammar lets raw newlines into strings
    except json.JSONDecodeError:
        partial = _partial_message(text)
        return AssistantMessage(partial if partial is not None else text)
    if isinstance(data, dict) and isinstance(data.get("tool"), str) and "arguments" in data:
        arguments = json.dumps(data["arguments"], ensure_ascii=False)
        return AssistantMessage(None, tool_calls=(ToolCall(call_id, data["tool"], arguments),))
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        return AssistantMessage(data["message"])
    return AssistantMessage(text)


def render_json_reply(message: AssistantMessage) -> str:
    """An assistant message in the protocol's form: one JSON object per line."""
    if not message.tool_calls:
        return json.dumps({"message": message.content or ""}, ensure_ascii=False)
    lines = []
    for call in message.tool_calls:
        try:
            arguments: Any = json.loads(call.arguments)
        except json.JSONDecodeError:
            arguments = call.arguments
        lines.append(json.dumps({"tool": call.name, "arguments": arguments}, ensure_ascii=False))
    return "\n".join(lines)


_MESSAGE_START = re.compile(r'\s*\{\s*"message"\s*:\s*"')


def _partial_message(text: str) -> str | None:
    """The string value of a cut-off ``{"message": "...`` object, or None."""
    start = _MESSAGE_START.match(text)
    if start is None:
        return None
    rest = text[start.end() :]
    for end in range(len(rest), max(len(rest) - 8, -1), -1):  # drop a cut-off escape or quote
        try:
            value = json.loads('"' + rest[:end] + '"', strict=False)
        except json.JSONDecodeError:
            continue
        return value if isinstance(value, str) else None
    return None
