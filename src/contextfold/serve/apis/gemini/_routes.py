"""Gemini's API at the proxy: ``POST /v1beta/models/{model}:generateContent``,
``:streamGenerateContent`` (``?alt=sse``: server-sent events; without: one JSON array) and
``:countTokens`` (also under ``/v1``), errors in Google's shape, so the google-genai SDK and
Gemini CLI fold through the proxy (to a Gemini upstream, or translated to another API's).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from contextfold.core.tokens import count_messages
from contextfold.serve.apis.gemini._client import GeminiWriter
from contextfold.serve.apis.gemini._media import check_for_chat
from contextfold.serve.apis.gemini._names import bad, camelized
from contextfold.serve.apis.gemini._read import read_contents, read_system
from contextfold.serve.apis.gemini._request import GeminiRequest, split_tools
from contextfold.serve.apis.gemini._wire import GEMINI_HEADERS, model_path
from contextfold.serve.edge.answer import answer
from contextfold.serve.edge.body import decode_body
from contextfold.serve.edge.events import EventStream
from contextfold.serve.edge.request import (
    TOKEN_HEADER,
    TOKEN_WAYS,
    check_token,
    family_of,
    has_token,
    read_body,
    upstream_headers,
)
from contextfold.serve.edge.routes import Endpoint
from contextfold.serve.errors import ApiError
from contextfold.serve.exchange import HeaderFamily
from contextfold.serve.sessions.conversation import Shown, conversation_of
from contextfold.serve.sessions.proxy import Proxy
from contextfold.serve.upstream.pool import HttpUpstream

__all__ = [
    "gemini_endpoints",
    "gemini_listing",
    "gemini_models",
    "openai_listing",
    "parse_gemini_request",
]

_METHODS = ("generateContent", "streamGenerateContent", "countTokens")


def gemini_endpoints(proxy: Proxy) -> list[Endpoint]:
    """The Gemini routes.

    A request is read into the conversation's messages (:mod:`._read`), the strategy renders
    its view, and the view goes to a Gemini upstream with the client's options, tools and key
    (``x-goog-api-key``, or ``?key=`` passed on as the header), or translated to another API's
    upstream (:mod:`._translate`). ``countTokens`` is the upstream's own count with a Gemini
    upstream, else the proxy's.
    """

    async def models(request: Request) -> Response:
        headers = _keyed(request, proxy.config.token)
        model, method = str(request.path_params["model"]), str(request.path_params["method"])
        if method not in _METHODS:
            raise ApiError(404, f"no method {method!r}: this proxy serves {', '.join(_METHODS)}")
        stream = method == "streamGenerateContent"
        parsed = await _parse(proxy, request, headers, model, stream=stream)
        if method == "countTokens":
            return await _count(proxy, parsed, model)
        sse = request.query_params.get("alt") == "sse"
        response = await answer(proxy, parsed, GeminiWriter(parsed, sse=sse), request.receive)
        if isinstance(response, EventStream) and not sse:  # the JSON array stream
            response.raw_headers[0] = (b"content-type", b"application/json; charset=UTF-8")
        return response

    async def listing(request: Request) -> Response:
        wire, token = proxy.upstream.wire, proxy.config.token
        headers = upstream_headers(_keyed(request, token), token, GEMINI_HEADERS, wire.family)
        listed = await proxy.upstream.models(headers)
        return JSONResponse(listed if wire.api == "gemini" else gemini_listing(listed))

    # token=False: each handler checks the proxy token itself, as a Gemini client may send it
    # as its key (x-goog-api-key, or ?key=: :func:`_keyed`), which the shared check reads not
    return [
        *(
            Endpoint("POST", f"/{v}/models/{{model}}:{{method}}", models, token=False, counted=True)
            for v in ("v1beta", "v1")
        ),
        Endpoint("GET", "/v1beta/models", listing, token=False),
    ]


def gemini_listing(listed: dict[str, Any]) -> dict[str, Any]:
    """Another API's model list as the ``models`` a Gemini SDK reads (in ``/v1/models`` too)."""
    return {"models": gemini_models(listed)}


def openai_listing(listed: dict[str, Any]) -> dict[str, Any]:
    """A Gemini upstream's ``models`` as OpenAI's list (``data``: an id per model, no
    ``models/``), which every other API's clients read in ``GET /v1/models``."""
    models = listed.get("models")
    models = models if isinstance(models, list) else []
    names = [str(m.get("name")) for m in models if isinstance(m, dict) and m.get("name")]
    data = [{"id": n.removeprefix("models/"), "object": "model", "created": 0,
             "owned_by": "google"} for n in names]  # fmt: skip
    return {"object": "list", "data": data}


def gemini_models(listed: dict[str, Any]) -> list[dict[str, Any]]:
    """Another API's model list (``{"data": [{"id"}]}``) as Gemini's ``models``."""
    methods = ["generateContent", "streamGenerateContent", "countTokens"]
    names = [str(m.get("id")) for m in listed.get("data") or () if isinstance(m, dict)]
    return [
        {"name": f"models/{n}", "displayName": n, "supportedGenerationMethods": methods}
        for n in names
    ]


def _keyed(request: Request, token: str | None) -> dict[str, str]:
    """The request's headers, a ``?key=`` given as the ``x-goog-api-key`` it stands for; a
    401 unless they carry the proxy ``token`` (the key may be it)."""
    headers: dict[str, str] = dict(request.headers)
    key = request.query_params.get("key")
    if key and "x-goog-api-key" not in headers:
        headers["x-goog-api-key"] = key
    as_token = {TOKEN_HEADER: headers.get("x-goog-api-key", "")}
    check_token(headers if has_token(headers, token) else as_token, token, _WAYS)
    return headers


_WAYS = f"it as the API key ('x-goog-api-key: TOKEN' or '?key=TOKEN'), or {TOKEN_WAYS},"


async def _parse(
    proxy: Proxy, request: Request, headers: dict[str, str], model: str, *, stream: bool
) -> GeminiRequest:
    token, shown, wire = proxy.config.token, proxy.markers.shown, proxy.upstream.wire
    data = await read_body(request, proxy.config.max_body)

    def parse() -> GeminiRequest:
        return parse_gemini_request(
            data, headers, model=model, stream=stream, token=token, shown=shown,
            upstream=wire.family, upstream_api=wire.api,
        )  # fmt: skip

    return await anyio.to_thread.run_sync(parse)  # off the loop: a body may be large


def parse_gemini_request(
    data: bytes,
    headers: Mapping[str, str],
    *,
    model: str,
    stream: bool = False,
    token: str | None = None,
    shown: Shown | None = None,
    upstream: HeaderFamily = GEMINI_HEADERS,
    upstream_api: str = "gemini",
) -> GeminiRequest:
    """A checked Gemini request for ``model`` (to an upstream of the API ``upstream_api``,
    whose provider's headers are ``upstream``); a 4xx :class:`ApiError` naming the field."""
    body = decode_body(data)
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    body = camelized(body)
    inner = body.get("generateContentRequest")  # countTokens' other form
    if isinstance(inner, dict):
        body = inner
    system = read_system(body.get("systemInstruction"))
    labeled = read_contents(body.get("contents"))
    if upstream_api == "chat":
        check_for_chat(body["contents"])
    tools = _tools(body.get("tools"))
    _check_config(body.get("generationConfig"))
    family = family_of(headers)
    conversation = conversation_of(
        labeled,
        family,
        system=system,
        shown=shown,
        field="contents",
        system_field="systemInstruction",
    )
    calling = ((body.get("toolConfig") or {}).get("functionCallingConfig")) or {}
    names = [d.get("name") for t in tools for d in t.get("functionDeclarations") or ()]
    return GeminiRequest(
        body={**body, "model": model.removeprefix("models/")},
        conversation=conversation,
        family=family,
        stream=stream,
        tools=split_tools(tools),
        tool_names=frozenset(str(n) for n in names),
        offer_own=calling.get("mode") != "NONE",
        headers=upstream_headers(headers, token, GEMINI_HEADERS, upstream),
    )


def _tools(raw: Any) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise bad("tools", "must be an array of Tool")
    for i, tool in enumerate(raw):
        declared = tool.get("functionDeclarations", []) if isinstance(tool, dict) else None
        if not isinstance(declared, list):
            raise bad(f"tools[{i}]", "must be a Tool whose functionDeclarations is an array")
        for j, fn in enumerate(declared):
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
                where = f"tools[{i}].functionDeclarations[{j}].name"
                raise bad(where, "a function declaration needs a name")
    return list(raw)


def _check_config(config: Any) -> None:
    if config is None:
        return
    if not isinstance(config, dict):
        raise bad("generationConfig", "must be an object")
    if config.get("candidateCount", 1) != 1:
        problem = "must be 1: the proxy keeps one history per conversation"
        raise bad("generationConfig.candidateCount", problem)
    limit = config.get("maxOutputTokens")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        problem = f"must be a whole number of at least 1, got {limit!r}"
        raise bad("generationConfig.maxOutputTokens", problem)


async def _count(proxy: Proxy, parsed: GeminiRequest, model: str) -> Response:
    """``countTokens``: the Gemini upstream's own count of the request, else the proxy's."""
    upstream = proxy.upstream
    if isinstance(upstream, HttpUpstream) and upstream.wire.api == "gemini":
        body = {k: v for k, v in parsed.body.items() if k != "model"}
        if set(body) - {"contents"}:  # the whole request: countTokens' other form
            body = {"generateContentRequest": {"model": f"models/{model}", **body}}
        path = model_path(model, "countTokens")
        return JSONResponse(await upstream.post(path, body, parsed.headers))
    conversation = parsed.conversation
    messages = [m for step in conversation.steps for m in step]
    if conversation.system is not None:
        messages.insert(0, conversation.system)
    return JSONResponse({"totalTokens": sum(count_messages(proxy.manager.counter, messages))})
