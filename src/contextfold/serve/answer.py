"""Answering one request of any API: the proxy's turn, then a JSON reply or an event stream."""

from __future__ import annotations

from starlette.responses import JSONResponse, Response

from contextfold.serve.events import EventStream
from contextfold.serve.exchange import ClientRequest, ClientWriter
from contextfold.serve.proxy import Proxy

__all__ = ["answer"]


async def answer(proxy: Proxy, request: ClientRequest, writer: ClientWriter) -> Response:
    """The response to ``request`` in its API (``writer``'s): the session claimed and the view
    rendered, then every upstream call; a failure before the client gets a status discards
    the turn and is answered as an error by the route."""
    turn, rounds = await proxy.begin(request)
    try:
        if not request.stream:
            reply = await proxy.complete(turn, rounds, writer)
            proxy.metrics.add("requests_total", status="200")
            return JSONResponse(reply)
        first = await proxy.open_stream(rounds)
    except BaseException:
        proxy.discard(turn)
        raise
    proxy.metrics.add("requests_total", status="200")
    return EventStream(proxy.stream(turn, rounds, writer.stream(), first))
