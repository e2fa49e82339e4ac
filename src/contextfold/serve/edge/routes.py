"""The proxy's routes, and the shape each answers errors in.

Every API the proxy speaks is a list of :class:`Endpoint` s (a method, a path, a handler and
its API's error shape, :attr:`~contextfold.serve.apis.spec.ApiSpec.errors`: OpenAI's,
:func:`openai_error`, unless its own). :class:`Routes` builds the Starlette routes and answers
what no endpoint serves (a wrong method: that path's shape and an ``Allow`` header; any other
path: a JSON 404 listing every route served, in the shape of the API whose paths it is under,
Google's under ``/v1beta/models/``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, compile_path

from contextfold.serve.errors import ApiError, UpstreamError

__all__ = [
    "Endpoint",
    "ErrorShape",
    "Handler",
    "Routes",
    "openai_error",
]

Handler = Callable[[Request], Awaitable[Response]]
ErrorShape = Callable[[ApiError], tuple[int, dict[str, Any]]]
"""The status and body an API answers an error with."""


def openai_error(exc: ApiError) -> tuple[int, dict[str, Any]]:
    """OpenAI's shape: ``{"error": {"message", "type", "param", "code"}}``; an upstream's
    error as it answered it (the same API's)."""
    return exc.status, exc.body()


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One route: ``method`` and ``path``, its handler, and how its API answers errors."""

    method: str
    path: str
    handler: Handler
    errors: ErrorShape = openai_error
    token: bool = True
    """Whether the route needs the proxy token (``/health`` does not)."""
    counted: bool = False
    """Whether ``requests_total`` counts its answers (the model APIs' routes)."""
    marks: tuple[str, ...] = ()
    """Headers only its API's clients send (their own key's: ``x-goog-api-key``), by which a
    request no route serves is answered in its API's shape."""


class Routes:
    """The endpoints of every API served, and the answers for what none of them serves. An
    upstream's error keeps its status, type and code in the client's API (an overloaded
    upstream is each API's own overloaded answer) and its retry headers go with it."""

    def __init__(self, endpoints: Sequence[Endpoint]) -> None:
        self.endpoints = list(endpoints)
        self._patterns = [compile_path(e.path)[0] for e in self.endpoints]

    def listing(self) -> list[str]:
        """``METHOD /path`` of every route served."""
        return [f"{e.method} {e.path}" for e in self.endpoints]

    def serving(self, path: str) -> list[Endpoint]:
        """The endpoints whose path is ``path`` (a route's, or a request's that it matches)."""
        return [
            e for e, p in zip(self.endpoints, self._patterns, strict=True)
            if e.path == path or p.match(path)
        ]  # fmt: skip

    def shape(self, path: str, headers: Mapping[str, str] | None = None) -> ErrorShape:
        """The error shape of the API serving ``path``; for a path none serves, that of the
        API whose clients alone send one of the ``headers`` (:attr:`Endpoint.marks`), else
        of the one whose paths share the most of its leading segments (``/v1beta/models``:
        Google's), else OpenAI's."""
        served = self.serving(path)
        if served:
            return served[0].errors
        marked = {e.errors for e in self.endpoints if any(m in (headers or {}) for m in e.marks)}
        if len(marked) == 1:
            return marked.pop()
        best: dict[ErrorShape, int] = {}
        for endpoint in self.endpoints:
            shared = _shared(path, endpoint.path)
            best[endpoint.errors] = max(best.get(endpoint.errors, 0), shared)
        top = max(best.values(), default=0)
        nearest = [shape for shape, shared in best.items() if shared == top]
        return nearest[0] if top and len(nearest) == 1 else openai_error

    def starlette_routes(self, wrap: Callable[[Endpoint], Handler]) -> list[Route]:
        return [Route(e.path, wrap(e), methods=[e.method]) for e in self.endpoints]

    def error(self, path: str, exc: ApiError, **headers: str) -> Response:
        """The answer to ``exc`` on ``path`` (an upstream's retry headers with it)."""
        status, body = self.shape(path)(exc)
        if isinstance(exc, UpstreamError):
            headers = {**exc.headers, **headers}
        return JSONResponse(body, status_code=status, headers=headers or None)

    async def not_found(self, request: Request, _: Exception) -> Response:
        path, method = request.url.path, request.method
        allowed = [e.method for e in self.serving(path)]
        if allowed:
            exc = ApiError(
                405, f"{method} {path} is not served; this path takes {', '.join(allowed)}"
            )
            return self.error(path, exc, allow=", ".join(allowed))
        routes = self.listing()
        exc = ApiError(404, f"no route {method} {path}; this proxy serves: {', '.join(routes)}")
        status, body = self.shape(path, request.headers)(exc)
        return JSONResponse({**body, "routes": routes}, status_code=status)


def _shared(path: str, route: str) -> int:
    """How many leading segments of ``path`` are those of ``route`` (up to its first
    parameter)."""
    count = 0
    for asked, given in zip(path.strip("/").split("/"), route.strip("/").split("/"), strict=False):
        if "{" in given or asked != given:
            break
        count += 1
    return count
