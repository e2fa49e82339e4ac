"""Streaming: an upstream stream opened and primed, and the events a client is sent.

:class:`Primed` reads (and checks, through the wire's reader) the first event of an upstream
stream when it opens, so a stream that fails before its first event fails before the client
gets a status (a 502); then it yields the reader's deltas as the events come.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from contextfold.serve.errors import UpstreamError
from contextfold.serve.exchange import Delta, Reader
from contextfold.serve.upstream.pool import ChunkStream

__all__ = ["Primed", "sse"]


def sse(data: dict[str, Any] | str, event: str | None = None) -> bytes:
    """One server-sent event carrying ``data`` (a dict as JSON, or ``[DONE]``), named
    ``event`` when the API names its events."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode()


class Primed:
    """An upstream stream whose first event is read when it opens (see the module)."""

    def __init__(self, stream: ChunkStream, events: AsyncIterator[tuple[str, dict[str, Any]]]):
        self._stream = stream
        self._events = events
        self._first: list[Delta] | None = None
        self.reader: Reader | None = None

    @classmethod
    async def open(cls, stream: ChunkStream, reader: Reader, where: str) -> Primed:
        primed = cls(stream, aiter(stream))
        primed.reader = reader
        try:
            name, data = await anext(primed._events)
            primed._first = reader.add(name, data)
        except StopAsyncIteration:
            await stream.aclose()
            raise UpstreamError(
                502, f"upstream {where} ended its stream before any chunk"
            ) from None
        except BaseException:
            await stream.aclose()
            raise
        return primed

    async def __aiter__(self) -> AsyncIterator[Delta]:
        assert self.reader is not None
        if self._first is not None:
            first, self._first = self._first, None
            for delta in first:
                yield delta
        async for name, data in self._events:
            for delta in self.reader.add(name, data):
                yield delta

    async def aclose(self) -> None:
        await self._stream.aclose()
