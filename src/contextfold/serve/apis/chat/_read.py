"""A Chat Completions request read and checked: its conversation (``messages``), tools,
token limits and ``stream_options`` (:func:`parse_chat`, into a :class:`ChatRequest`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from contextfold.serve.apis.chat.wire import OPENAI_HEADERS
from contextfold.serve.edge.request import family_of, json_object, tool_list, upstream_headers
from contextfold.serve.errors import ApiError
from contextfold.serve.exchange import ClientRequest, HeaderFamily
from contextfold.serve.sessions.conversation import Shown, parse_conversation

__all__ = ["ChatRequest", "parse_chat"]


@dataclass(frozen=True, slots=True)
class ChatRequest(ClientRequest):
    """A Chat Completions request."""

    api: ClassVar[str] = "chat"
    include_usage: bool = False
    """``stream_options.include_usage``: the stream ends with a usage chunk."""

    def chat_options(self) -> dict[str, Any]:
        """Its own options, as they came."""
        return {k: v for k, v in self.body.items() if k not in _NOT_OPTIONS}

    def chat_tool(self, tool: dict[str, Any]) -> dict[str, Any] | None:
        return tool


_NOT_OPTIONS = ("stream_options", "messages", "tools")


def parse_chat(
    data: bytes,
    headers: Mapping[str, str],
    token: str | None = None,
    shown: Shown | None = None,
    upstream: HeaderFamily = OPENAI_HEADERS,
) -> ChatRequest:
    """Decode and check a chat request for an upstream of the ``upstream`` family (the
    client's headers go only to OpenAI's); raises a 4xx :class:`ApiError` naming the problem."""
    body = json_object(data)
    stream = bool(body.get("stream", False))
    if body.get("n", 1) not in (1, None):
        raise ApiError(
            400, "'n' must be 1: the proxy keeps one history per conversation", param="n"
        )
    for key in _TOKEN_LIMITS:
        _check_limit(body, key)
    family = family_of(headers)
    options = body.get("stream_options")
    include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
    tools = tool_list(body.get("tools"), _tool_problem)
    conversation = parse_conversation(body.get("messages"), family, shown)
    return ChatRequest(
        body=body,
        conversation=conversation,
        family=family,
        stream=stream,
        tools=tools,
        tool_names=frozenset(t["function"]["name"] for t in tools),
        offer_own=body.get("tool_choice") != "none",
        headers=upstream_headers(headers, token, OPENAI_HEADERS, upstream),
        include_usage=include_usage,
    )


_TOKEN_LIMITS = ("max_tokens", "max_completion_tokens")


def _check_limit(body: dict[str, Any], key: str) -> None:
    value = body.get(key)
    if value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ApiError(
            400, f"'{key}' must be a whole number of at least 1, got {value!r}", param=key
        )


def _tool_problem(i: int, tool: Any) -> ApiError | None:
    fn = tool.get("function") if isinstance(tool, dict) else None
    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
        return ApiError(400, f"tools[{i}] must be a function tool with a name", param="tools")
    return None
