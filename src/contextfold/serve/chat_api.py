"""OpenAI's Chat Completions API at the proxy: ``POST /v1/chat/completions`` (streamed or
not) and ``GET /v1/models`` (the upstream's), each also without the ``/v1`` prefix."""

from __future__ import annotations

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from contextfold.serve.events import EventStream
from contextfold.serve.proxy import Proxy
from contextfold.serve.request import parse_chat, read_body, upstream_auth
from contextfold.serve.routes import Endpoint

__all__ = ["chat_endpoints"]


def chat_endpoints(proxy: Proxy) -> list[Endpoint]:
    async def chat(request: Request) -> Response:
        return await _chat(proxy, request)

    async def models(request: Request) -> Response:
        auth = upstream_auth(request.headers, proxy.config.token)
        return JSONResponse(await proxy.upstream.models(auth))

    out = []
    for prefix in ("/v1", ""):
        out.append(Endpoint("POST", f"{prefix}/chat/completions", chat, counted=True))
        out.append(Endpoint("GET", f"{prefix}/models", models))
    return out


async def _chat(proxy: Proxy, request: Request) -> Response:
    body = await read_body(request, proxy.config.max_body)
    chat = await anyio.to_thread.run_sync(parse_chat, body, request.headers)  # off the loop
    auth = upstream_auth(request.headers, proxy.config.token)
    turn, rounds = await proxy.begin(chat)
    try:
        if not chat.stream:
            reply = await proxy.complete(turn, rounds, auth)
            proxy.metrics.add("requests_total", status="200")
            return JSONResponse(reply)
        first = await proxy.open_stream(rounds, auth)
    except BaseException:
        proxy.discard(turn)
        raise
    proxy.metrics.add("requests_total", status="200")
    return EventStream(proxy.stream(turn, rounds, auth, first))
