"""Answering one request of any API: the proxy's turn, then a JSON reply or an event stream.

Until the reply is whole, a client that hangs up is watched for (:func:`_hang_up`): its turn
is cancelled at once (the upstream call let go, the session freed) and nothing of it is
stored, so its retry continues the session. A stream watches for itself
(:class:`~contextfold.serve.edge.events.EventStream`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import anyio
from starlette.responses import JSONResponse, Response
from starlette.types import Receive

from contextfold.serve.edge.events import EventStream
from contextfold.serve.edge.streaming import Primed
from contextfold.serve.exchange import ClientRequest, ClientWriter
from contextfold.serve.sessions.proxy import Proxy

__all__ = ["answer"]


async def answer(
    proxy: Proxy, request: ClientRequest, writer: ClientWriter, receive: Receive
) -> Response:
    """The response to ``request`` in its API (``writer``'s): the session claimed and the view
    rendered, then every upstream call; a failure before the client gets a status discards
    the turn and is answered as an error by the route. ``receive`` is the request's ASGI
    channel, read for the client's hang-up."""
    out, gone = _Out(), anyio.CancelScope()  # cancelled when the client hangs up
    watcher = asyncio.ensure_future(_hang_up(receive, gone))
    try:
        with gone:
            turn, rounds = await proxy.begin(request)
            try:
                if not request.stream:
                    out.reply = await proxy.complete(turn, rounds, writer)
                else:
                    out.first = await proxy.open_stream(turn, rounds)
            except BaseException:
                proxy.discard(turn)
                raise
    finally:
        watcher.cancel()
    if gone.cancelled_caught:
        return Response(status_code=499)  # nobody reads it: the client hung up
    proxy.metrics.add("requests_total", status="200")
    if out.reply is not None:
        return JSONResponse(out.reply)
    assert out.first is not None
    return EventStream(proxy.stream(turn, rounds, writer.stream(), out.first))


@dataclass(slots=True)
class _Out:
    reply: dict[str, Any] | None = None
    first: Primed | None = None


async def _hang_up(receive: Receive, scope: anyio.CancelScope) -> None:
    """Cancel ``scope`` when the client hangs up."""
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()
