"""The model server behind the proxy: any OpenAI-compatible URL (httpx), or the embedded model.

An :class:`Upstream` answers a chat-completions body whole (:meth:`Upstream.complete`) or as a
:class:`ChunkStream` of ``chat.completion.chunk`` dicts (:meth:`Upstream.stream`, which raises
before the first chunk when the upstream refuses). Failures are
:class:`~contextfold.serve.errors.UpstreamError` s carrying the upstream's own message. The
client's ``Authorization`` travels with each call and is never kept.

:class:`HttpUpstream` holds one pool of at most ``max_connections`` connections that every
session shares (``--max-upstream-connections``); a call that finds them all busy waits
``pool_wait`` seconds for one, then is refused with a 503 (:data:`POOL_EXHAUSTED`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from contextfold.serve.config import redact_url
from contextfold.serve.errors import ApiError, UpstreamError

__all__ = ["POOL_EXHAUSTED", "ChunkStream", "HttpUpstream", "Pool", "Upstream"]

POOL_EXHAUSTED = "upstream_pool_exhausted"
"""The ``code`` of the 503 a call gets when no upstream connection came free in time."""


@dataclass(frozen=True, slots=True)
class Pool:
    """The upstream connections now: in use, and at most."""

    in_use: int
    limit: int


class ChunkStream(Protocol):
    """An open streamed reply: iterate its chunks, then close it."""

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]: ...

    async def aclose(self) -> None: ...


class Upstream(Protocol):
    """Where the proxy sends the views it renders."""

    @property
    def name(self) -> str: ...

    async def complete(self, body: dict[str, Any], auth: str | None) -> dict[str, Any]: ...

    async def stream(self, body: dict[str, Any], auth: str | None) -> ChunkStream: ...

    async def models(self, auth: str | None) -> dict[str, Any]: ...

    def pool(self) -> Pool:
        """Its connections now (for ``/metrics``)."""
        ...

    async def aclose(self) -> None: ...


class HttpUpstream:
    """An OpenAI-compatible server at ``base_url`` (``http://host:port/v1``). Its ``name``,
    which every message shows, is the URL with any password redacted."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = 600.0,
        key: str | None = None,
        max_connections: int = 64,
        pool_wait: float = 5.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.name = redact_url(self.base_url)
        self._secret = httpx.URL(self.base_url).password or None
        self._key = key
        self._limit, self._wait, self._in_use = max_connections, pool_wait, 0
        limits = httpx.Limits(
            max_connections=max_connections, max_keepalive_connections=min(32, max_connections)
        )
        deadlines = httpx.Timeout(timeout, connect=10.0, pool=pool_wait)
        self._client = httpx.AsyncClient(base_url=self.base_url, timeout=deadlines, limits=limits)

    async def complete(self, body: dict[str, Any], auth: str | None) -> dict[str, Any]:
        request = self._client.build_request(
            "POST", "/chat/completions", json=body, headers=self._headers(auth)
        )
        response = await self._send(request, stream=False)
        return _json_object(response, self.name)

    async def stream(self, body: dict[str, Any], auth: str | None) -> ChunkStream:
        request = self._client.build_request(
            "POST", "/chat/completions", json=body, headers=self._headers(auth)
        )
        response = await self._send(request, stream=True)
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
        return _SSEStream(response, self.name, self._released)

    async def models(self, auth: str | None) -> dict[str, Any]:
        request = self._client.build_request("GET", "/models", headers=self._headers(auth))
        return _json_object(await self._send(request, stream=False), self.name)

    def pool(self) -> Pool:
        return Pool(self._in_use, self._limit)

    async def aclose(self) -> None:
        await self._client.aclose()

    def _released(self) -> None:
        self._in_use -= 1

    def _headers(self, auth: str | None) -> dict[str, str]:
        if auth:
            return {"Authorization": auth}
        return {"Authorization": f"Bearer {self._key}"} if self._key else {}

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
            text = self._scrub(_error_text(response, self.name))
            raise UpstreamError(response.status_code, text)
        return response

    def _scrub(self, text: str) -> str:
        """``text`` without the URL's password (an exception may quote the URL)."""
        return text.replace(self._secret, "***") if self._secret else text


class _SSEStream:
    def __init__(self, response: httpx.Response, where: str, released: Callable[[], None]) -> None:
        self._response = response
        self._where = where
        self._released: Callable[[], None] | None = released

    async def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        """The chunks up to ``[DONE]``; a stream that ends before it was cut off (502)."""
        try:
            async for line in self._response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    return
                chunk = _decode_chunk(data, self._where)
                if "error" in chunk:
                    raise UpstreamError(502, f"upstream {self._where}: {_message(chunk)}")
                yield chunk
        except httpx.HTTPError as exc:
            raise UpstreamError(
                502, f"upstream {self._where} failed mid-stream: {type(exc).__name__}: {exc}"
            ) from exc
        raise UpstreamError(502, f"upstream {self._where} closed its stream before [DONE]")

    async def aclose(self) -> None:
        await self._response.aclose()
        released, self._released = self._released, None  # the connection goes back once
        if released is not None:
            released()


def _decode_chunk(data: str, where: str) -> dict[str, Any]:
    try:
        chunk = json.loads(data)
    except json.JSONDecodeError as exc:
        raise UpstreamError(502, f"upstream {where} streamed invalid JSON: {data[:200]!r}") from exc
    if not isinstance(chunk, dict):
        raise UpstreamError(502, f"upstream {where} streamed a non-object: {data[:200]!r}")
    return chunk


def _json_object(response: httpx.Response, where: str) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        data = None
    if not isinstance(data, dict):
        text = response.text[:200]
        raise UpstreamError(502, f"upstream {where} answered no JSON object: {text!r}")
    return data


def _error_text(response: httpx.Response, where: str) -> str:
    try:
        data = response.json()
    except ValueError:
        data = None
    detail = _message(data) if isinstance(data, dict) else response.text[:500].strip()
    return f"upstream {where} answered {response.status_code}: {detail or response.reason_phrase}"


def _message(data: dict[str, Any]) -> str:
    error = data.get("error", data)
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)
