"""A server-sent-event response that stops as soon as the client goes away."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

__all__ = ["EventStream"]


class EventStream(Response):
    """Server-sent events from ``events``. A watcher cancels the stream on
    ``http.disconnect`` (uvicorn drops writes to a closed connection silently), so the proxy
    discards the request at once instead of finishing it."""

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
