"""The HTTP side of ``contextfold serve``: a Starlette app over a :class:`Proxy`.

One place routes every API the upstream lets the proxy serve, with the operations routes, and
guards them all alike (the token, or loopback only), so every error is JSON in the shape of
the API whose route was asked (:func:`create_app`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from contextfold.core.errors import ContextFoldError
from contextfold.serve.apis import APIS, served_apis
from contextfold.serve.edge.loopback import check_local
from contextfold.serve.edge.request import check_token, has_token, upstream_headers
from contextfold.serve.edge.routes import Endpoint, Handler, Routes
from contextfold.serve.errors import ApiError
from contextfold.serve.sessions.proxy import Proxy

__all__ = ["create_app"]


_log = logging.getLogger(__name__)


def create_app(proxy: Proxy) -> Starlette:
    """The ASGI app serving ``proxy`` (its store opens at start-up, closes at shutdown).

    Routes (:mod:`~contextfold.serve.edge.routes`): the APIs the upstream lets the proxy serve
    (:func:`~contextfold.serve.apis.served_apis`, each API's routes and error shape from its
    :data:`~contextfold.serve.apis.APIS` entry), ``GET /v1/models`` (the upstream's, with the APIs
    served), ``GET /health`` (no token needed; ``?upstream=1`` also asks whether the upstream
    can be reached: a 503 when not), ``GET /metrics`` (Prometheus text). Every route
    but ``/health`` needs the bearer token unless the proxy runs with ``--no-auth`` on loopback;
    then every route answers only requests addressed to the loopback host from no foreign page
    (:mod:`~contextfold.serve.edge.loopback`). Bodies over the size limit get a 413 before they are
    read whole. Every error is JSON in the shape of the API whose route was asked.
    """

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        proxy.start()
        yield
        await proxy.stop()

    apis = served_apis(proxy.upstream.wire.api)
    served = [
        replace(e, errors=APIS[a].errors, marks=_marks(a))
        for a in apis
        for e in APIS[a].routes(proxy)
    ]
    routes = Routes([*served, *_models(proxy, apis), *_operations(proxy)])
    handlers = {404: routes.not_found, 405: routes.not_found}
    return Starlette(
        routes=routes.starlette_routes(lambda e: _guarded(proxy, routes, e)),
        exception_handlers=handlers,
        lifespan=lifespan,
    )


def _marks(api: str) -> tuple[str, ...]:
    """The header of the API's clients' own key (``x-goog-api-key``), which they alone send."""
    key = APIS[api].wire().family.key
    return (key,) if key else ()


def _models(proxy: Proxy, apis: list[str]) -> list[Endpoint]:
    """``GET /v1/models``: the upstream's list (with OpenAI's ``data`` when its API lists
    otherwise, and what a served API's clients read there:
    :attr:`~contextfold.serve.apis.spec.ApiSpec.listed`), with the APIs this proxy serves."""
    upstream, family = proxy.upstream.wire.api, proxy.upstream.wire.family

    common = APIS[upstream].as_openai  # OpenAI's list, which the others are made from

    async def models(request: Request) -> Response:
        # a provider's list, with its clients' headers; to one whose clients list elsewhere
        # too (Gemini's), only when the asking client sends that provider's key
        headers = upstream_headers(request.headers, proxy.config.token, family, family)
        if common is not None and (family.key or "") not in request.headers:
            headers = {}  # another provider's client: its Authorization is not Google's
        listing = await proxy.upstream.models(headers)
        listing = listing if common is None else {**common(listing), **listing}
        titles = [APIS[a].title for a in apis]
        served = {"apis": titles, "upstream_api": APIS[upstream].title}
        for more in (APIS[a].listed for a in apis):  # its clients' own fields beside
            listing = listing if more is None else {**more(listing), **listing}
        return JSONResponse({**listing, "contextfold": served})

    return [Endpoint("GET", path, models) for path in ("/v1/models", "/models")]


def _operations(proxy: Proxy) -> list[Endpoint]:
    async def metrics(request: Request) -> Response:
        return PlainTextResponse(proxy.render_metrics(), media_type="text/plain; version=0.0.4")

    async def health(request: Request) -> Response:
        ready = proxy.sessions is not None
        body: dict[str, object] = {"status": "ok" if ready else "starting"}
        known = has_token(request.headers, proxy.config.token)
        if known:  # where requests go: not for all
            body["upstream"] = proxy.upstream.name
        status = 200 if ready else 503
        if request.query_params.get("upstream") in ("1", "true"):  # and the upstream, asked
            problem = await proxy.upstream.probe()
            body["upstream_reachable"] = problem is None
            if problem is not None:
                body["status"], status = "upstream unreachable", 503
                if known:
                    body["upstream_error"] = problem
        return JSONResponse(body, status_code=status)

    return [
        Endpoint("GET", "/health", health, token=False),
        Endpoint("GET", "/metrics", metrics),
    ]


def _guarded(proxy: Proxy, routes: Routes, endpoint: Endpoint) -> Handler:
    token = proxy.config.token if endpoint.token else None
    local_only = proxy.config.no_auth

    async def wrapped(request: Request) -> Response:
        try:
            if local_only:
                server = request.scope.get("server")
                check_local(request.method, request.headers, server[1] if server else None)
            check_token(request.headers, token)
            return await endpoint.handler(request)
        except ClientDisconnect:  # the client's doing, not the proxy's: one line, no trace
            _log.warning(
                "contextfold serve: %s %s: the client hung up before its request was whole",
                request.method, request.url.path,
            )  # fmt: skip
            return Response(status_code=499)  # nobody reads it
        except ApiError as exc:
            return _error(proxy, routes, endpoint, exc)
        except ContextFoldError as exc:  # a strategy or store failure: the proxy's fault
            return _error(proxy, routes, endpoint, ApiError(500, f"contextfold failed: {exc}"))
        except Exception as exc:  # a defect of the proxy: logged whole, answered in JSON
            _log.exception("contextfold serve: %s %s failed", request.method, endpoint.path)
            failure = ApiError(500, f"contextfold failed: {type(exc).__name__} (logged)")
            return _error(proxy, routes, endpoint, failure)

    return wrapped


def _error(proxy: Proxy, routes: Routes, endpoint: Endpoint, exc: ApiError) -> Response:
    proxy.failed(exc)
    answer = routes.error(endpoint.path, exc)
    if endpoint.counted:
        proxy.metrics.add("requests_total", status=str(answer.status_code))
    return answer
