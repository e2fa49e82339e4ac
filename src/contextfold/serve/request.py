"""Reading a client's request: the body (size-limited JSON), its checks, its credentials, the
session it names; and the Chat Completions request itself (the other APIs' are read in their
own modules)."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from typing import Any

from starlette.datastructures import Headers
from starlette.requests import Request

from contextfold.serve.body import decode_body
from contextfold.serve.conversation import Shown, parse_conversation
from contextfold.serve.errors import ApiError
from contextfold.serve.exchange import ClientRequest

__all__ = [
    "HINT_HEADERS",
    "check_token",
    "family_of",
    "has_token",
    "json_object",
    "parse_chat",
    "read_body",
    "upstream_auth",
    "upstream_headers",
]

SESSION_HEADER = "x-contextfold-session"
TOKEN_HEADER = "x-contextfold-token"
HINT_HEADERS = ("x-claude-code-session-id", "x-codex-window-id")
"""Headers agents send that name their session (Claude Code's, Codex CLI's): they seed the
session family when the client names none with ``X-Contextfold-Session``."""


async def read_body(request: Request, limit: int) -> bytes:
    """The body, or a 413 as soon as it is known to be over ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    body = bytearray()
    async for part in request.stream():
        body += part
        if len(body) > limit:
            raise _too_large(limit)
    return bytes(body)


def _too_large(limit: int) -> ApiError:
    return ApiError(413, f"the request body is over the proxy's limit of {limit:,} bytes")


def json_object(data: bytes) -> dict[str, Any]:
    """The body decoded, with a string ``model`` and a boolean ``stream`` (4xx otherwise)."""
    body = decode_body(data)
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise ApiError(400, "'model' must be a non-empty string", param="model")
    if not isinstance(body.get("stream", False), bool):
        raise ApiError(400, "'stream' must be true or false", param="stream")
    return body


def parse_chat(
    data: bytes,
    headers: Mapping[str, str],
    token: str | None = None,
    shown: Shown | None = None,
    upstream: str = "chat",
) -> ClientRequest:
    """Decode and check a chat request for an ``upstream`` of that API; raises a 4xx
    :class:`ApiError` naming the problem."""
    body = json_object(data)
    stream = bool(body.get("stream", False))
    if body.get("n", 1) not in (1, None):
        raise ApiError(
            400, "'n' must be 1: the proxy keeps one history per conversation", param="n"
        )
    for key in _TOKEN_LIMITS:
        _check_limit(body, key)
    family = family_of(headers)
    options = body.get("stream_options")
    include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
    tools = _tools(body.get("tools"))
    conversation = parse_conversation(body.get("messages"), family, shown)
    return ClientRequest(
        api="chat",
        body=body,
        conversation=conversation,
        family=family,
        stream=stream,
        tools=tools,
        tool_names=frozenset(t["function"]["name"] for t in tools),
        offer_own=body.get("tool_choice") != "none",
        headers=upstream_headers(headers, token, "chat", upstream),
        include_usage=include_usage,
    )


_TOKEN_LIMITS = ("max_tokens", "max_completion_tokens")


def _check_limit(body: dict[str, Any], key: str) -> None:
    value = body.get(key)
    if value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ApiError(
            400, f"'{key}' must be a whole number of at least 1, got {value!r}", param=key
        )


def family_of(headers: Mapping[str, str]) -> str:
    """The session family the client names (``X-Contextfold-Session``), else the one its
    agent names (:data:`HINT_HEADERS`; one with other characters is hashed), or empty."""
    value = headers.get(SESSION_HEADER, "").strip()
    if value:
        if not _family_text(value):
            raise ApiError(
                400,
                "X-Contextfold-Session must be at most 200 characters of letters, digits and -_.:~",
                param="X-Contextfold-Session",
            )
        return value
    for name in HINT_HEADERS:
        hint = headers.get(name, "").strip()
        if hint:
            return hint if _family_text(hint) else _hashed(hint)
    return ""


def _hashed(value: str) -> str:
    return hashlib.blake2b(value.encode("utf-8", "replace"), digest_size=12).hexdigest()


def _family_text(value: str) -> bool:
    return len(value) <= 200 and all(c.isascii() and (c.isalnum() or c in "-_.:~") for c in value)


def _tools(raw: Any) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ApiError(400, "'tools' must be an array", param="tools")
    for i, tool in enumerate(raw):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
            raise ApiError(400, f"tools[{i}] must be a function tool with a name", param="tools")
    return list(raw)


def has_token(headers: Mapping[str, str], token: str | None, key: str = "") -> bool:
    """Whether the request carries ``token`` (as ``Authorization: Bearer``,
    ``X-Contextfold-Token``, an Anthropic client's ``x-api-key``, a Gemini client's
    ``x-goog-api-key`` or its ``?key=``: ``key``); always with ``token`` None (auth is off)."""
    if token is None:
        return True
    given = [
        headers.get(TOKEN_HEADER, ""),
        _bearer(headers.get("authorization", "")),
        headers.get("x-api-key", ""),
        headers.get("x-goog-api-key", ""),
        key,
    ]
    return any(g and hmac.compare_digest(g.encode(), token.encode()) for g in given)


def check_token(headers: Mapping[str, str], token: str | None, key: str = "") -> None:
    """Raise a 401 unless the request carries ``token`` (see :func:`has_token`)."""
    if not has_token(headers, token, key):
        raise ApiError(
            401,
            "missing or wrong proxy token: send 'Authorization: Bearer TOKEN' or "
            "'X-Contextfold-Token: TOKEN' with the token contextfold serve was given",
            code="invalid_api_key",
        )


_PASSED = {
    "anthropic": ("anthropic-version", "anthropic-beta"),
    "openai": ("openai-beta", "openai-organization", "openai-project"),
    "gemini": ("x-goog-api-client", "x-goog-user-project"),
}
_LISTS = ("anthropic-beta", "openai-beta")
"""Headers whose value is a comma-separated list: sent more than once, all their values go."""


def upstream_headers(
    headers: Mapping[str, str], token: str | None, client: str, upstream: str
) -> dict[str, str]:
    """What goes upstream with a client's call: its own credentials (never the proxy token)
    and its API's headers (a beta header sent more than once: all its values, joined), when
    the upstream speaks the client's API family (Anthropic's, Gemini's, or OpenAI's); a client's key
    for one provider never goes to another's server; a value that is not printable ASCII is
    a 400 naming the header. Never kept."""
    family = _family(client)
    if family != _family(upstream):
        return {}
    out = {name: _value(headers, name) for name in _PASSED[family] if name in headers}
    for name in ("authorization", "x-api-key", "x-goog-api-key"):
        _check_header(name, headers.get(name, ""))
    for name, value in out.items():
        _check_header(name, value)
    auth = upstream_auth(headers, token)
    if auth:
        out["Authorization"] = auth
    for name in ("x-api-key", "x-goog-api-key"):
        key = headers.get(name, "")
        if family == _KEYED[name] and key and not _is_token(key, token):
            out[name] = key
    return out


_KEYED = {"x-api-key": "anthropic", "x-goog-api-key": "gemini"}
"""The key header of each API family that has one of its own."""


def _family(api: str) -> str:
    return api if api in ("anthropic", "gemini") else "openai"


def _value(headers: Mapping[str, str], name: str) -> str:
    """A header's value; every value of a list header sent more than once, joined (as HTTP
    allows), so each beta a client names goes upstream."""
    if name in _LISTS and isinstance(headers, Headers):
        return ",".join(v.strip() for v in headers.getlist(name) if v.strip())
    return headers[name]


def _check_header(name: str, value: str) -> None:
    """A 400 unless a header passed upstream is printable ASCII (as HTTP's field values are;
    a byte past it cannot be sent on as it came)."""
    if value and not (value.isascii() and value.isprintable()):
        raise ApiError(
            400,
            f"the {name} header holds a character that is not printable ASCII: {value!r:.80}",
            param=name,
        )


def _is_token(value: str, token: str | None) -> bool:
    return token is not None and hmac.compare_digest(value.encode(), token.encode())


def upstream_auth(headers: Mapping[str, str], token: str | None) -> str | None:
    """The ``Authorization`` to pass upstream: the client's own, unless it is the proxy token
    (then None, and the upstream gets the server's key if it has one). Never stored or logged."""
    auth = headers.get("authorization")
    if not auth:
        return None
    if token is not None and hmac.compare_digest(_bearer(auth).encode(), token.encode()):
        return None
    return auth


def _bearer(value: str) -> str:
    scheme, _, credential = value.partition(" ")
    return credential.strip() if scheme.lower() == "bearer" else ""
