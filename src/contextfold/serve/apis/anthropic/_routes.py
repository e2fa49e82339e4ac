"""Anthropic's Messages API at the proxy: ``POST /v1/messages`` (streamed or not) and ``POST
/v1/messages/count_tokens``, errors in Anthropic's shape, so Claude Code and the anthropic
SDK fold through the proxy (to an Anthropic upstream, or translated to Chat Completions).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from contextfold.core.tokens import count_messages
from contextfold.serve.apis.anthropic._cache import Marks
from contextfold.serve.apis.anthropic._client import AnthropicWriter
from contextfold.serve.apis.anthropic._read import read_messages, read_system
from contextfold.serve.apis.anthropic._request import AnthropicRequest
from contextfold.serve.apis.anthropic._wire import ANTHROPIC_HEADERS
from contextfold.serve.edge.answer import answer
from contextfold.serve.edge.request import (
    family_of,
    json_object,
    read_body,
    tool_list,
    upstream_headers,
)
from contextfold.serve.edge.routes import Endpoint
from contextfold.serve.errors import ApiError
from contextfold.serve.exchange import HeaderFamily
from contextfold.serve.sessions.conversation import Shown, conversation_of
from contextfold.serve.sessions.proxy import Proxy
from contextfold.serve.upstream.pool import HttpUpstream

__all__ = ["anthropic_endpoints", "parse_messages_request"]


def anthropic_endpoints(proxy: Proxy) -> list[Endpoint]:
    """The Messages routes.

    A request is read into the conversation's messages (:mod:`._read`; its
    ``cache_control`` markers kept apart), the strategy renders its view, and the view goes to an
    Anthropic upstream as a Messages body with the client's options, tools, query
    (``?beta=true``), ``anthropic-version``, ``anthropic-beta`` and ``x-api-key`` as it sent
    them, or translated to a Chat Completions upstream
    (:mod:`~contextfold.serve.apis.chat.translate`).
    ``count_tokens`` is the upstream's own count with an Anthropic upstream, else the proxy's count.
    """

    async def messages(request: Request) -> Response:
        parsed = await _parse(proxy, request, count=False)
        return await answer(proxy, parsed, AnthropicWriter(parsed), request.receive)

    async def count(request: Request) -> Response:
        parsed = await _parse(proxy, request, count=True)
        upstream = proxy.upstream
        if isinstance(upstream, HttpUpstream) and upstream.wire.api == "anthropic":
            body = {k: v for k, v in parsed.body.items() if k not in ("stream", "max_tokens")}
            path = "/messages/count_tokens"
            counted = await upstream.post(path, body, parsed.headers, parsed.query)
            return JSONResponse(counted)
        return JSONResponse({"input_tokens": _count(proxy, parsed)})

    return [
        Endpoint("POST", "/v1/messages", messages, counted=True),
        Endpoint("POST", "/v1/messages/count_tokens", count),
    ]


async def _parse(proxy: Proxy, request: Request, *, count: bool) -> AnthropicRequest:
    data = await read_body(request, proxy.config.max_body)
    token, shown, wire = proxy.config.token, proxy.markers.shown, proxy.upstream.wire
    family, query = wire.family, request.url.query if wire.api == "anthropic" else ""

    def parse() -> AnthropicRequest:
        return parse_messages_request(
            data,
            request.headers,
            token=token,
            shown=shown,
            upstream=family,
            count=count,
            query=query,
        )

    return await anyio.to_thread.run_sync(parse)  # off the loop: a body may be large


def parse_messages_request(
    data: bytes,
    headers: Mapping[str, str],
    *,
    token: str | None = None,
    shown: Shown | None = None,
    upstream: HeaderFamily = ANTHROPIC_HEADERS,
    count: bool = False,
    query: str = "",
) -> AnthropicRequest:
    """A checked Messages request; a 4xx :class:`ApiError` naming the field otherwise."""
    body = json_object(data)
    if not count:
        _check_max_tokens(body.get("max_tokens"))
    marks = Marks()
    system = read_system(body.get("system"), marks)
    labeled = read_messages(body.get("messages"), marks)
    tools = _tools(body.get("tools"), marks)
    family = family_of(headers)
    conversation = conversation_of(
        labeled, family, system=system, shown=shown, system_field="system"
    )
    marks.locate(conversation.steps)
    choice = _tool_choice(body.get("tool_choice"))
    return AnthropicRequest(
        body=body,
        conversation=conversation,
        family=family,
        stream=bool(body.get("stream", False)),
        tools=tools,
        tool_names=frozenset(str(t.get("name", "")) for t in tools),
        offer_own=not (isinstance(choice, dict) and choice.get("type") == "none"),
        headers=upstream_headers(headers, token, ANTHROPIC_HEADERS, upstream),
        query=query,
        marks=marks,
    )


def _check_max_tokens(value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ApiError(
            400,
            f"max_tokens: a whole number of at least 1 is required, got {value!r}",
            param="max_tokens",
        )


_CHOICES = ("auto", "any", "tool", "none")


def _tool_choice(choice: Any) -> Any:
    """``tool_choice`` checked: absent, or ``{"type": auto | any | tool | none}`` (a tool
    choice with the tool's ``name``)."""
    if choice is None:
        return None
    kind = choice.get("type") if isinstance(choice, dict) else None
    if kind not in _CHOICES:
        raise ApiError(
            400,
            "tool_choice: must be an object whose type is auto, any, tool or none, "
            f"got {choice!r:.100}",
            param="tool_choice",
        )
    if kind == "tool" and not (isinstance(choice.get("name"), str) and choice["name"]):
        raise ApiError(400, "tool_choice: a tool choice needs the tool's name", param="tool_choice")
    return choice


def _tools(raw: Any, marks: Marks) -> list[dict[str, Any]]:
    tools = tool_list(raw, _tool_problem, message="tools: must be an array of tools")
    marks.tools += sum("cache_control" in t for t in tools)
    return tools


def _tool_problem(i: int, tool: Any) -> ApiError | None:
    if not isinstance(tool, dict) or not isinstance(tool.get("name"), str) or not tool["name"]:
        return ApiError(400, f"tools.{i}: a tool needs a name", param=f"tools.{i}")
    return None


def _count(proxy: Proxy, request: AnthropicRequest) -> int:
    """The request's tokens as the proxy counts them (its history's counter)."""
    conversation = request.conversation
    messages = [m for step in conversation.steps for m in step]
    if conversation.system is not None:
        messages.insert(0, conversation.system)
    return sum(count_messages(proxy.manager.counter, messages))
