"""Anthropic Messages, OpenAI Responses and Gemini requests sent to a Chat Completions upstream.

The conversation is the same in every API (:mod:`.exchange`), so only the rest of a request is
translated: its options (:func:`chat_base`), its tools (:func:`chat_tools`) and its
``tool_choice``; the model's reply is read back into the one conversation model
(:func:`from_chat`). So a Chat Completions server (or the embedded model) serves every API
(Gemini's own translation: :mod:`~contextfold.serve.apis.gemini._translate`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from contextfold.core.messages import AssistantMessage, Message, ToolCall, ToolMessage, to_openai
from contextfold.serve.apis.chat.media import after_results, carried
from contextfold.serve.body import NotPortable, strict_json
from contextfold.serve.exchange import ClientRequest

__all__ = ["chat_base", "chat_messages", "chat_tools", "from_chat"]

_log = logging.getLogger(__name__)
_LOGGED: set[str] = set()

_SHELL = {
    "type": "object",
    "properties": {
        "type": {"type": "string", "enum": ["exec"]},
        "command": {"type": "array", "items": {"type": "string"}},
        "workdir": {"type": "string"},
        "timeout_ms": {"type": "integer"},
        "env": {"type": "object", "additionalProperties": {"type": "string"}},
    },
    "required": ["type", "command"],
}
_TEXT_INPUT = {
    "type": "object",
    "properties": {"input": {"type": "string", "description": "the tool's whole input"}},
    "required": ["input"],
}


_RESPONSES_TOOLS = ("function", "custom", "local_shell")


def chat_tools(request: ClientRequest) -> list[dict[str, Any]]:
    """The client's tools as Chat Completions function tools (those a Chat Completions
    server can be given).

    A tool that runs on the provider's own servers (Anthropic's or OpenAI's web search, which
    Codex always offers) cannot be given to a Chat Completions server: it is left out of the
    upstream's tools, and the proxy logs it once per kind. A Responses custom tool (free-form
    text input, as Codex's ``apply_patch``) becomes a function taking one string ``input``, and
    its calls are read back as text (:func:`from_chat`); ``local_shell`` becomes a function
    taking the action.
    """
    if request.api == "chat":
        return list(request.tools)
    if request.api == "gemini":
        from contextfold.serve.apis.gemini._translate import chat_tools_of  # no import cycle

        return chat_tools_of(request.tools)
    out = []
    for tool in request.tools:
        kind = tool.get("type")
        if kind in _RESPONSES_TOOLS if request.api == "responses" else kind in (None, "custom"):
            out.append(_function(request.api, tool))
        elif kind not in _LOGGED:
            _LOGGED.add(str(kind))
            _log.warning(
                "contextfold serve: a %r tool runs on the provider's servers; a Chat Completions "
                "upstream is not given it (logged once)",
                kind,
            )
    return out


def _function(api: str, tool: dict[str, Any]) -> dict[str, Any]:
    if api == "anthropic":
        fn = {"name": tool["name"], "parameters": tool.get("input_schema") or {"type": "object"}}
    elif tool["type"] == "local_shell":
        fn = {"name": "local_shell", "parameters": _SHELL, "description": "Run a command."}
    elif tool["type"] == "custom":
        fn = {"name": tool["name"], "parameters": _TEXT_INPUT}
    else:
        fn = {"name": tool["name"], "parameters": tool.get("parameters") or {"type": "object"}}
    if tool.get("description"):
        fn["description"] = tool["description"]
    return {"type": "function", "function": fn}


def chat_base(request: ClientRequest) -> dict[str, Any]:
    """The options of a Chat Completions body for ``request`` (no messages, tools or stream):
    those a Chat Completions server has are translated (``max_tokens``, ``temperature``,
    ``top_p``, stop sequences, a JSON-schema output format, ``tool_choice``)."""
    body = request.body
    if request.api == "chat":
        return {k: v for k, v in body.items() if k not in ("stream_options", "messages", "tools")}
    if request.api == "gemini":
        from contextfold.serve.apis.gemini._translate import chat_options  # no import cycle

        return chat_options(body)
    out: dict[str, Any] = {"model": body["model"]}
    for key in ("temperature", "top_p"):
        if key in body:
            out[key] = body[key]
    limit = body.get("max_tokens" if request.api == "anthropic" else "max_output_tokens")
    if limit is not None:
        out["max_tokens"] = limit
    if request.api == "anthropic" and body.get("stop_sequences"):
        out["stop"] = body["stop_sequences"]
    if request.api == "responses":
        if "parallel_tool_calls" in body:
            out["parallel_tool_calls"] = body["parallel_tool_calls"]
        fmt = (body.get("text") or {}).get("format")
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            schema = {k: fmt[k] for k in ("name", "schema", "strict") if k in fmt}
            out["response_format"] = {"type": "json_schema", "json_schema": schema}
    choice = _tool_choice(request.api, body.get("tool_choice"))
    if choice is not None:
        out["tool_choice"] = choice
    return out


def _tool_choice(api: str, choice: Any) -> Any:
    if choice is None:
        return None
    if isinstance(choice, str):  # Responses: auto, required, none
        return choice
    kind = choice.get("type")
    if kind in ("auto", "none"):
        return kind
    if kind in ("any", "required"):
        return "required"
    name = choice.get("name")
    return {"type": "function", "function": {"name": name}} if name else None


def chat_messages(messages: Sequence[Message], request: ClientRequest) -> list[dict[str, Any]]:
    """The conversation as Chat Completions messages (a custom tool's input as ``{"input"}``;
    images and ``is_error`` carried as :mod:`~contextfold.serve.apis.chat.media` says)."""
    out: list[dict[str, Any]] = []
    images: list[dict[str, Any]] = []  # of the tool results just written, sent after them
    results: list[str] = []
    for message in messages:
        if images and not isinstance(message, ToolMessage):
            out.append(after_results(results, images))
            images, results = [], []
        if request.custom_tools and isinstance(message, AssistantMessage):
            calls = tuple(_wrapped(c, request.custom_tools) for c in message.tool_calls)
            message = replace(message, tool_calls=calls)
        written = to_openai(message, parts=False)
        if request.api != "chat":
            more = carried(message, written, request.api)
            images += more
            results += [message.tool_call_id] if more and isinstance(message, ToolMessage) else []
        out.append(written)
    return [*out, after_results(results, images)] if images else out


def _wrapped(call: ToolCall, custom: frozenset[str]) -> ToolCall:
    if call.name not in custom:
        return call
    return ToolCall(call.id, call.name, json.dumps({"input": call.arguments}, ensure_ascii=False))


def from_chat(message: AssistantMessage, request: ClientRequest) -> AssistantMessage:
    """A Chat Completions reply read back for ``request``'s API (a custom tool's ``input``
    unwrapped to its text)."""
    if not request.custom_tools:
        return message
    calls = tuple(_unwrapped(c, request.custom_tools) for c in message.tool_calls)
    return replace(message, tool_calls=calls)


def _unwrapped(call: ToolCall, custom: frozenset[str]) -> ToolCall:
    if call.name not in custom:
        return call
    try:
        value = strict_json(call.arguments)
    except NotPortable:
        return call
    text = value.get("input") if isinstance(value, dict) else None
    return ToolCall(call.id, call.name, text) if isinstance(text, str) else call
