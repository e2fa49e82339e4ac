"""The model server behind the proxy: a URL speaking one API (httpx), or the embedded model.

One :class:`Upstream` contract for both, so the proxy sends a view the same way wherever it
goes; failures carry the upstream's own message, and the client's credentials travel with each
call and are never kept.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from contextfold.serve.config import redact_url
from contextfold.serve.edge.body import NotPortable, strict_json
from contextfold.serve.errors import ApiError, UpstreamError
from contextfold.serve.exchange import Wire
from contextfold.serve.upstream.errors import answered_error, streamed_error

__all__ = ["POOL_EXHAUSTED", "ChunkStream", "HttpUpstream", "Pool", "Upstream"]

POOL_EXHAUSTED = "upstream_pool_exhausted"
"""The ``code`` of the 503 a call gets when no upstream connection came free in time."""


@dataclass(frozen=True, slots=True)
class Pool:
    """The upstream connections now: in use, and at most."""

    in_use: int
    limit: int


class ChunkStream(Protocol):
    """An open streamed reply: iterate its events (name, data), then close it."""

    def __aiter__(self) -> AsyncIterator[tuple[str, dict[str, Any]]]: ...

    async def aclose(self) -> None: ...


class Upstream(Protocol):
    """Where the proxy sends the views it renders.

    It answers a body of its API (its :attr:`wire`: Chat Completions, Anthropic Messages or
    OpenAI Responses) whole (:meth:`complete`) or as a :class:`ChunkStream` of server-sent
    events, each its name and data (:meth:`stream`, which raises before the first event when
    the upstream refuses). Failures are :class:`~contextfold.serve.errors.UpstreamError` s
    carrying the upstream's own message. The client's credentials travel with each call and are
    never kept.
    """

    @property
    def name(self) -> str: ...

    @property
    def wire(self) -> Wire:
        """The API it speaks."""
        ...

    async def complete(
        self, body: dict[str, Any], headers: Mapping[str, str], query: str = "", *, path: str
    ) -> dict[str, Any]:
        """``path``: where the call goes after the base URL (its wire's
        :meth:`~contextfold.serve.exchange.Wire.path`)."""
        ...

    async def stream(
        self, body: dict[str, Any], headers: Mapping[str, str], query: str = "", *, path: str
    ) -> ChunkStream: ...

    async def models(self, headers: Mapping[str, str]) -> dict[str, Any]: ...

    async def probe(self) -> str | None:
        """None when it can be reached (``/health?upstream=1``), else why not."""
        ...

    def pool(self) -> Pool:
        """Its connections now (for ``/metrics``)."""
        ...

    async def aclose(self) -> None: ...


class HttpUpstream:
    """A server at ``base_url`` (``http://host:port/v1``) speaking ``wire``'s API. Its ``name``,
    which every message shows, is the URL with any password redacted.

    It holds one pool of at most ``max_connections`` connections that every session shares
    (``--max-upstream-connections``); a call that finds them all busy waits ``pool_wait``
    seconds for one, then is refused with a 503 (:data:`POOL_EXHAUSTED`).
    """

    def __init__(
        self,
        base_url: str,
        *,
        wire: Wire,
        timeout: float = 600.0,
        key: str | None = None,
        max_connections: int = 64,
        pool_wait: float = 5.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.wire = wire
        self.name = redact_url(self.base_url)
        self._secret = httpx.URL(self.base_url).password or None
        self._key = key
        self._limit, self._wait, self._in_use = max_connections, pool_wait, 0
        limits = httpx.Limits(
            max_connections=max_connections, max_keepalive_connections=min(32, max_connections)
        )
        deadlines = httpx.Timeout(timeout, connect=10.0, pool=pool_wait)
        self._client = httpx.AsyncClient(base_url=self.base_url, timeout=deadlines, limits=limits)

    async def complete(
        self, body: dict[str, Any], headers: Mapping[str, str], query: str = "", *, path: str
    ) -> dict[str, Any]:
        response = await self._send(self._post(path, body, headers, query), stream=False)
        return _json_object(response, self.name)

    async def stream(
        self, body: dict[str, Any], headers: Mapping[str, str], query: str = "", *, path: str
    ) -> ChunkStream:
        response = await self._send(self._post(path, body, headers, query), stream=True)
        media = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if media != "text/event-stream":
            try:
                head = await anext(response.aiter_text(), "")
            finally:
                await response.aclose()
                self._released()
            raise UpstreamError(
                502,
                f"upstream {self.name} answered a streamed request with {media or 'no type'!r}, "
                f"not an event stream: {head[:200]!r}",
            )
        wire = self.wire
        return _SSEStream(response, self.name, self._released, wire.done, wire.api)

    async def models(self, headers: Mapping[str, str]) -> dict[str, Any]:
        request = self._client.build_request("GET", "/models", headers=self._headers(headers))
        return _json_object(await self._send(request, stream=False), self.name)

    async def probe(self) -> str | None:
        """Any HTTP answer to ``GET /models`` (a 401 or a 404 too) says the server is there."""
        try:
            await self._client.get("/models", headers=self._headers({}), timeout=5.0)
        except httpx.HTTPError as exc:
            return f"upstream {self.name} unreachable: " + self._scrub(
                f"{type(exc).__name__}: {exc}"
            )
        return None

    async def post(
        self, path: str, body: dict[str, Any], headers: Mapping[str, str], query: str = ""
    ) -> dict[str, Any]:
        """Another route of the upstream's API (``/messages/count_tokens``, with the client's
        query: ``?beta=true``), answered whole."""
        url = f"{path}?{query}" if query else path
        request = self._client.build_request("POST", url, json=body, headers=self._headers(headers))
        return _json_object(await self._send(request, stream=False), self.name)

    def _post(
        self, path: str, body: dict[str, Any], headers: Mapping[str, str], query: str
    ) -> httpx.Request:
        path = f"{path}{'&' if '?' in path else '?'}{query}" if query else path
        return self._client.build_request("POST", path, json=body, headers=self._headers(headers))

    def pool(self) -> Pool:
        return Pool(self._in_use, self._limit)

    async def aclose(self) -> None:
        await self._client.aclose()

    def _released(self) -> None:
        self._in_use -= 1

    def _headers(self, given: Mapping[str, str]) -> dict[str, str]:
        """The client's headers for the upstream, completed by its API (the server's key when
        the client sent none)."""
        return self.wire.headers(dict(given), self._key)

    async def _send(self, request: httpx.Request, *, stream: bool) -> httpx.Response:
        """Send on a pooled connection (held, for a stream, until the stream is closed)."""
        self._in_use += 1
        held = False
        try:
            response = await self._receive(request, stream=stream)
            held = stream
            return response
        finally:
            if not held:
                self._in_use -= 1

    async def _receive(self, request: httpx.Request, *, stream: bool) -> httpx.Response:
        try:
            response = await self._client.send(request, stream=stream)
        except httpx.PoolTimeout as exc:
            raise ApiError(
                503,
                f"all {self._limit} connections to upstream {self.name} are in use and none "
                f"came free in {self._wait:g} s; retry later, or raise "
                f"--max-upstream-connections (now {self._limit})",
                code=POOL_EXHAUSTED,
            ) from exc
        except httpx.HTTPError as exc:
            problem = self._scrub(f"{type(exc).__name__}: {exc}")
            raise UpstreamError(502, f"upstream {self.name} unreachable: {problem}") from exc
        if response.status_code >= 400:
            try:
                await response.aread()
            finally:
                await response.aclose()
            raise answered_error(response, self.name, self.wire.api, self._scrub)
        return response

    def _scrub(self, text: str) -> str:
        """``text`` without the URL's password (an exception may quote the URL)."""
        return text.replace(self._secret, "***") if self._secret else text


class _SSEStream:
    def __init__(
        self,
        response: httpx.Response,
        where: str,
        released: Callable[[], None],
        done: str | None,
        api: str,
    ) -> None:
        self._response = response
        self._where = where
        self._released: Callable[[], None] | None = released
        self._done = done
        self._api = api

    async def __aiter__(self) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        """The events up to the ``data`` line ``done`` (``[DONE]``: a stream that ends before
        it was cut off, a 502), or to the stream's end; an ``error`` event is the upstream's
        error, its type and code kept (:func:`~.upstream_errors.streamed_error`)."""
        event = ""
        try:
            async for line in self._response.aiter_lines():
                if line.startswith("event:"):
                    event = line[6:].strip()
                    continue
                if not line.startswith("data:"):
                    event = event if line.strip() else ""
                    continue
                data = line[5:].strip()
                if self._done is not None and data == self._done:
                    return
                chunk = _decode_chunk(data, self._where)
                if event == "error" or (not event and "error" in chunk):
                    raise streamed_error(chunk, self._where, self._api)
                yield event, chunk
        except httpx.HTTPError as exc:
            raise UpstreamError(
                502, f"upstream {self._where} failed mid-stream: {type(exc).__name__}: {exc}"
            ) from exc
        if self._done is not None:
            raise UpstreamError(
                502, f"upstream {self._where} closed its stream before {self._done}"
            )

    async def aclose(self) -> None:
        await self._response.aclose()
        released, self._released = self._released, None  # the connection goes back once
        if released is not None:
            released()


def _decode_chunk(data: str, where: str) -> dict[str, Any]:
    try:
        chunk = strict_json(data)
    except NotPortable as exc:
        raise UpstreamError(502, f"upstream {where} streamed an event that {_why(exc)}") from exc
    if not isinstance(chunk, dict):
        raise UpstreamError(502, f"upstream {where} streamed a non-object: {data[:200]!r}")
    return chunk


def _json_object(response: httpx.Response, where: str) -> dict[str, Any]:
    """The reply's JSON object, decoded strictly (:func:`~.body.strict_json`)."""
    try:
        data = strict_json(response.content)
    except NotPortable as exc:
        text = f"{_why(exc)}: {response.text[:200]!r}"
        raise UpstreamError(502, f"upstream {where} answered a reply that {text}") from exc
    if not isinstance(data, dict):
        text = response.text[:200]
        raise UpstreamError(502, f"upstream {where} answered no JSON object: {text!r}")
    return data


def _why(exc: NotPortable) -> str:
    """``is not valid JSON: ...``, ``holds a lone surrogate ... (at content[0].text)``."""
    return f"{exc.problem} (at {exc.where})" if exc.where else exc.problem
