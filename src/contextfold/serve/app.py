"""The HTTP side of ``contextfold serve``: a Starlette app over a :class:`Proxy`.

Routes: ``POST /v1/chat/completions`` (streamed or not), ``GET /v1/models`` (the upstream's),
``GET /health`` (no token needed), ``GET /metrics`` (Prometheus text). Every route but
``/health`` needs the bearer token unless the proxy runs with ``--no-auth`` on loopback. Bodies
over the size limit get a 413 before they are read whole. Errors are OpenAI-style JSON.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from contextfold.core.errors import ContextFoldError
from contextfold.serve.errors import ApiError
from contextfold.serve.proxy import Proxy
from contextfold.serve.request import check_token, parse_chat, upstream_auth

__all__ = ["create_app"]

Handler = Callable[[Request], Awaitable[Response]]


def create_app(proxy: Proxy) -> Starlette:
    """The ASGI app serving ``proxy`` (its store opens at start-up, closes at shutdown)."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        proxy.start()
        yield
        await proxy.stop()

    token = proxy.config.token

    def guarded(handler: Handler) -> Handler:
        async def wrapped(request: Request) -> Response:
            try:
                check_token(request.headers, token)
                return await handler(request)
            except ContextFoldError as exc:  # a strategy or store failure: the proxy's fault
                return _error(proxy, request, ApiError(500, f"contextfold failed: {exc}"))
            except ApiError as exc:
                return _error(proxy, request, exc)

        return wrapped

    async def chat(request: Request) -> Response:
        return await _chat(proxy, request)

    async def models(request: Request) -> Response:
        return JSONResponse(await proxy.upstream.models(upstream_auth(request.headers, token)))

    async def metrics(request: Request) -> Response:
        return PlainTextResponse(proxy.metrics.render(), media_type="text/plain; version=0.0.4")

    async def health(request: Request) -> Response:
        ready = proxy.sessions is not None
        body = {"status": "ok" if ready else "starting", "upstream": proxy.upstream.name}
        return JSONResponse(body, status_code=200 if ready else 503)

    routes = [
        Route("/v1/chat/completions", guarded(chat), methods=["POST"]),
        Route("/chat/completions", guarded(chat), methods=["POST"]),
        Route("/v1/models", guarded(models), methods=["GET"]),
        Route("/models", guarded(models), methods=["GET"]),
        Route("/metrics", guarded(metrics), methods=["GET"]),
        Route("/health", health, methods=["GET"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


async def _chat(proxy: Proxy, request: Request) -> Response:
    chat = parse_chat(await _read_body(request, proxy.config.max_body), request.headers)
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


def _error(proxy: Proxy, request: Request, exc: ApiError) -> Response:
    proxy.failed(exc)
    if request.url.path.endswith("/chat/completions"):
        proxy.metrics.add("requests_total", status=str(exc.status))
    return JSONResponse(exc.body(), status_code=exc.status)


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    body = bytearray()
    async for part in request.stream():
        body += part
        if len(body) > limit:
            raise _too_large(limit)
    return bytes(body)


def _too_large(limit: int) -> ApiError:
    return ApiError(413, f"the request body is over the proxy's limit of {limit:,} bytes")


class EventStream(Response):
    """A server-sent-event response that stops as soon as the client goes away: a watcher
    cancels the stream on ``http.disconnect`` (uvicorn drops writes to a closed connection
    silently), so the proxy discards the request at once instead of finishing it."""

    media_type = "text/event-stream"

    def __init__(self, events: AsyncGenerator[bytes, None]) -> None:
        # not Response.__init__: it would declare a Content-Length for an empty body
        self.status_code = 200
        self.background = None
        self.raw_headers = [
            (b"content-type", b"text/event-stream"),
            (b"cache-control", b"no-cache"),
        ]
        self.events = events

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        async with anyio.create_task_group() as group:

            async def pump() -> None:
                try:
                    async for data in self.events:
                        await send({"type": "http.response.body", "body": data, "more_body": True})
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                finally:
                    with anyio.CancelScope(shield=True):
                        await self.events.aclose()
                group.cancel_scope.cancel()

            async def watch() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                group.cancel_scope.cancel()

            group.start_soon(pump)
            group.start_soon(watch)
