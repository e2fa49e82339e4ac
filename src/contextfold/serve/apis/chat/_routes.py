"""OpenAI's Chat Completions API at the proxy: ``POST /v1/chat/completions`` (streamed or
not), also without the ``/v1`` prefix."""

from __future__ import annotations

import anyio
from starlette.requests import Request
from starlette.responses import Response

from contextfold.serve.apis.chat._client import ChatWriter
from contextfold.serve.apis.chat._read import parse_chat
from contextfold.serve.edge.answer import answer
from contextfold.serve.edge.request import read_body
from contextfold.serve.edge.routes import Endpoint
from contextfold.serve.sessions.proxy import Proxy

__all__ = ["chat_endpoints"]


def chat_endpoints(proxy: Proxy) -> list[Endpoint]:
    async def chat(request: Request) -> Response:
        body = await read_body(request, proxy.config.max_body)
        token, shown, family = proxy.config.token, proxy.markers.shown, proxy.upstream.wire.family
        parsed = await anyio.to_thread.run_sync(  # off the loop: a body may be large
            lambda: parse_chat(body, request.headers, token, shown, family)
        )
        return await answer(proxy, parsed, ChatWriter(parsed), request.receive)

    return [
        Endpoint("POST", f"{prefix}/chat/completions", chat, counted=True) for prefix in ("/v1", "")
    ]
