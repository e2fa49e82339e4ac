"""OpenAI's Responses API at the proxy: ``POST /v1/responses`` (streamed or not), ``GET`` and
``DELETE /v1/responses/{id}``, errors in OpenAI's shape, so Codex CLI and the openai SDK's
responses fold through the proxy (to a Responses upstream, or translated to Chat Completions).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from contextfold.core.messages import SystemMessage
from contextfold.serve.apis.chat.wire import OPENAI_HEADERS
from contextfold.serve.apis.responses._client import ResponsesWriter
from contextfold.serve.apis.responses._read import read_input
from contextfold.serve.apis.responses._request import ResponsesRequest
from contextfold.serve.apis.responses._store import ResponseStore, Stored
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

__all__ = ["parse_responses_request", "responses_endpoints"]

_KINDS = {"custom": "custom_tool_call", "local_shell": "local_shell_call"}


def responses_endpoints(proxy: Proxy) -> list[Endpoint]:
    """The Responses routes, their answers kept in memory (``--responses-memory``; the
    ``responses_kept`` gauges say how much).

    A request's ``instructions`` and ``input`` (a string, or items: messages, function, custom and
    local-shell calls and their outputs, reasoning) are read into the conversation's messages
    (:mod:`._read`); with ``previous_response_id`` the input starts with everything that response
    continued (:mod:`._store`), so a client that sends only its new input continues its session. The
    view goes to a Responses upstream as a stateless Responses body with the client's options and
    tools, or translated to a Chat Completions upstream
    (:mod:`~contextfold.serve.apis.chat.translate`). ``POST /v1/responses/compact`` (Codex's remote
    compaction) is not served: the proxy manages the context itself, and says so in a 404 the client
    can read."""

    store = ResponseStore(proxy.config.responses_memory)

    def gauges() -> None:
        proxy.metrics.set("responses_kept", len(store))
        proxy.metrics.set("responses_kept_bytes", store.bytes)

    async def create(request: Request) -> Response:
        data = await read_body(request, proxy.config.max_body)
        token, shown, family = proxy.config.token, proxy.markers.shown, proxy.upstream.wire.family

        def parse() -> ResponsesRequest:
            return parse_responses_request(
                data, request.headers, store, token=token, shown=shown, upstream=family
            )

        parsed = await anyio.to_thread.run_sync(parse)  # off the loop: a body may be large
        writer = ResponsesWriter(parsed, _keeper(parsed, store, gauges))
        return await answer(proxy, parsed, writer, request.receive)

    async def get(request: Request) -> Response:
        return JSONResponse(store.get(_id(request)).response)

    async def delete(request: Request) -> Response:
        response_id = _id(request)
        store.get(response_id)  # a 404 when unknown
        store.delete(response_id)
        gauges()
        return JSONResponse({"id": response_id, "object": "response.deleted", "deleted": True})

    async def compact(request: Request) -> Response:
        raise ApiError(
            404,
            "POST /v1/responses/compact is not served: contextfold serve manages the context "
            "itself (its strategy renders every call's view), so compact locally or not at all",
            code="not_served",
        )

    return [
        Endpoint("POST", "/v1/responses", create, counted=True),
        Endpoint("POST", "/v1/responses/compact", compact),
        Endpoint("GET", "/v1/responses/{response_id}", get),
        Endpoint("DELETE", "/v1/responses/{response_id}", delete),
    ]


def _id(request: Request) -> str:
    return str(request.path_params["response_id"])


def _keeper(request: ResponsesRequest, store: ResponseStore, kept: Callable[[], None]) -> Any:
    """Keeps a finished response, unless the client said ``store: false``."""
    previous = request.body.get("previous_response_id")
    new_input = _new_input(request.body.get("input"))

    def keep(response: dict[str, Any]) -> None:
        if request.body.get("store", True) is not False:
            store.put(Stored(previous, new_input, response))
            kept()

    return keep


def _new_input(raw: Any) -> list[dict[str, Any]]:
    if isinstance(raw, str):
        return [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": raw}]}
        ]
    return list(raw or [])


def parse_responses_request(
    data: bytes,
    headers: Mapping[str, str],
    store: ResponseStore,
    *,
    token: str | None = None,
    shown: Shown | None = None,
    upstream: HeaderFamily = OPENAI_HEADERS,
) -> ResponsesRequest:
    """A checked Responses request; a 4xx :class:`ApiError` naming the field otherwise."""
    body = json_object(data)
    previous = body.get("previous_response_id")
    if previous is not None and not isinstance(previous, str):
        raise ApiError(400, "'previous_response_id' must be a string", param="previous_response_id")
    if body.get("input") is None and not previous:
        raise ApiError(400, "'input' is required", param="input")
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise ApiError(400, "'instructions' must be a string", param="instructions")
    first = not instructions  # a leading system item is then the system prompt
    if previous:
        labeled = read_input(store.items(previous), "previous_response_id", system_first=first)
        labeled += read_input(body.get("input") or [], "input")
    else:
        labeled = read_input(body.get("input") or [], "input", system_first=first)
    tools = tool_list(body.get("tools"), _tool_problem)
    _check_options(body)
    family = family_of(headers)
    system = SystemMessage(instructions) if instructions else None
    conversation = conversation_of(
        labeled, family, system=system, shown=shown, field="input", system_field="instructions"
    )
    return ResponsesRequest(
        body=body,
        conversation=conversation,
        family=family,
        stream=bool(body.get("stream", False)),
        tools=tools,
        tool_names=frozenset(_name(t) for t in tools),
        offer_own=body.get("tool_choice") != "none",
        headers=upstream_headers(headers, token, OPENAI_HEADERS, upstream),
        call_kinds={_name(t): _KINDS[t["type"]] for t in tools if t.get("type") in _KINDS},
    )


_CHOICES = ("auto", "none", "required")


def _check_options(body: dict[str, Any]) -> None:
    """``tool_choice`` (auto, none, required, or an object with a type) and ``text`` (an
    object, its ``format`` an object with a type), or a 400 naming the field."""
    choice = body.get("tool_choice")
    if not (
        choice is None
        or choice in _CHOICES
        or (isinstance(choice, dict) and isinstance(choice.get("type"), str))
    ):
        raise ApiError(
            400,
            f"'tool_choice' must be auto, none, required or a tool choice object with a type, "
            f"got {choice!r:.100}",
            param="tool_choice",
        )
    text = body.get("text")
    if text is not None and not isinstance(text, dict):
        raise ApiError(400, f"'text' must be an object, got {text!r:.100}", param="text")
    fmt = (text or {}).get("format")
    if fmt is not None and not (isinstance(fmt, dict) and isinstance(fmt.get("type"), str)):
        raise ApiError(
            400,
            f"'text.format' must be an object with a type, got {fmt!r:.100}",
            param="text.format",
        )


def _tool_problem(i: int, tool: Any) -> ApiError | None:
    if not isinstance(tool, dict) or not isinstance(tool.get("type"), str):
        return ApiError(400, f"tools[{i}] must be a tool with a type", param=f"tools[{i}]")
    if tool["type"] in ("function", "custom") and not (
        isinstance(tool.get("name"), str) and tool["name"]
    ):
        return ApiError(400, f"tools[{i}]: a {tool['type']} tool needs a name", param=f"tools[{i}]")
    return None


def _name(tool: dict[str, Any]) -> str:
    return "local_shell" if tool.get("type") == "local_shell" else str(tool.get("name") or "")
