"""A request of any API sent to a Chat Completions upstream.

The conversation is the same in every API (:mod:`~contextfold.serve.exchange`), so only the rest of
a request is translated, as its API's request says: its options (:func:`chat_base`) and its tools
(:func:`chat_tools`); the model's reply is read back into the one conversation model
(:func:`from_chat`). So a Chat Completions server (or the embedded model) serves every API."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from contextfold.core.messages import AssistantMessage, Message, ToolCall, ToolMessage, to_openai
from contextfold.serve.apis.chat.media import after_results, carried
from contextfold.serve.edge.body import NotPortable, strict_json
from contextfold.serve.exchange import ClientRequest

__all__ = ["chat_base", "chat_messages", "chat_tools", "from_chat"]

_log = logging.getLogger(__name__)
_LOGGED: set[str] = set()


def chat_tools(request: ClientRequest) -> list[dict[str, Any]]:
    """The client's tools as Chat Completions function tools (those a Chat Completions
    server can be given: :meth:`~.exchange.ClientRequest.chat_tool`).

    A tool that runs on the provider's own servers (Anthropic's or OpenAI's web search, which
    Codex always offers) cannot be given to a Chat Completions server: it is left out of the
    upstream's tools, and the proxy logs it once per kind (its ``type``, else its one field:
    Gemini's ``googleSearch``). A tool whose input is free text (a Responses custom tool) has
    its calls read back as text (:func:`from_chat`).
    """
    out = []
    for tool in request.tools:
        written = request.chat_tool(tool)
        if written is not None:
            out.append(written)
        elif (kind := str(tool.get("type") or next(iter(tool), ""))) not in _LOGGED:
            _LOGGED.add(kind)
            _log.warning(
                "contextfold serve: a %r tool runs on the provider's servers; a Chat Completions "
                "upstream is not given it (logged once)",
                kind,
            )
    return out


def chat_base(request: ClientRequest) -> dict[str, Any]:
    """The options of a Chat Completions body for ``request`` (no messages, tools or stream):
    :meth:`~.exchange.ClientRequest.chat_options`."""
    return request.chat_options()


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
        if request.text_tools and isinstance(message, AssistantMessage):
            calls = tuple(_wrapped(c, request.text_tools) for c in message.tool_calls)
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
    if not request.text_tools:
        return message
    calls = tuple(_unwrapped(c, request.text_tools) for c in message.tool_calls)
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
