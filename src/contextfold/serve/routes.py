"""The proxy's routes, and the shape each answers errors in.

Every API the proxy speaks is a list of :class:`Endpoint` s (a method, a path, a handler and
its API's error shape, :attr:`~contextfold.serve.apis.spec.ApiSpec.errors`: OpenAI's,
:func:`openai_error`, unless its own). :class:`Routes` builds the Starlette routes and answers
what no endpoint serves (a wrong method: that path's shape and an ``Allow`` header; any other
path: a JSON 404 listing every route served).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

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


class Routes:
    """The endpoints of every API served, and the answers for what none of them serves. An
    upstream's error keeps its status, type and code in the client's API (an overloaded
    upstream is each API's own overloaded answer) and its retry headers go with it."""

    def __init__(self, endpoints: Sequence[Endpoint]) -> None:
        self.endpoints = list(endpoints)

    def listing(self) -> list[str]:
        """``METHOD /path`` of every route served."""
        return [f"{e.method} {e.path}" for e in self.endpoints]

    def shape(self, path: str) -> ErrorShape:
        """The error shape of the API serving ``path`` (OpenAI's for a path none serves)."""
        return next((e.errors for e in self.endpoints if e.path == path), openai_error)

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
        allowed = [e.method for e in self.endpoints if e.path == path]
        if allowed:
            exc = ApiError(
                405, f"{method} {path} is not served; this path takes {', '.join(allowed)}"
            )
            return self.error(path, exc, allow=", ".join(allowed))
        routes = self.listing()
        exc = ApiError(404, f"no route {method} {path}; this proxy serves: {', '.join(routes)}")
        return JSONResponse({**exc.body(), "routes": routes}, status_code=404)
