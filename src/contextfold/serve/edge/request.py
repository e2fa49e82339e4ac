"""What reading a client's request of any API shares: the body (size-limited JSON with a
``model``), the proxy token, the session family it names, its ``tools`` array, and the
headers that go upstream with its calls (each API reads the rest in ``apis/<api>/``)."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Mapping
from typing import Any

from starlette.datastructures import Headers
from starlette.requests import Request

from contextfold.serve.edge.body import decode_body
from contextfold.serve.errors import ApiError
from contextfold.serve.exchange import HeaderFamily

__all__ = [
    "HINT_HEADERS",
    "TOKEN_WAYS",
    "check_token",
    "family_of",
    "has_token",
    "json_object",
    "read_body",
    "tool_list",
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


def tool_list(
    raw: Any, problem: Callable[[int, Any], ApiError | None], *, message: str = ""
) -> list[dict[str, Any]]:
    """A request's ``tools``: absent is none; not an array is a 400 (``message``, else
    ``'tools' must be an array``); each tool checked by ``problem`` (its index and the tool:
    the error to raise, or None)."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ApiError(400, message or "'tools' must be an array", param="tools")
    for i, tool in enumerate(raw):
        error = problem(i, tool)
        if error is not None:
            raise error
    return list(raw)


def has_token(headers: Mapping[str, str], token: str | None) -> bool:
    """Whether the request carries ``token`` (as ``Authorization: Bearer``,
    ``X-Contextfold-Token`` or an Anthropic client's ``x-api-key``); always with ``token``
    None (auth is off)."""
    if token is None:
        return True
    given = [
        headers.get(TOKEN_HEADER, ""),
        _bearer(headers.get("authorization", "")),
        headers.get("x-api-key", ""),
    ]
    return any(g and hmac.compare_digest(g.encode(), token.encode()) for g in given)


TOKEN_WAYS = "'Authorization: Bearer TOKEN' or 'X-Contextfold-Token: TOKEN'"
"""How a client sends the proxy token (an API may take it in more ways: Gemini's key)."""


def check_token(headers: Mapping[str, str], token: str | None, ways: str = TOKEN_WAYS) -> None:
    """Raise a 401 unless the request carries ``token`` (see :func:`has_token`); its message
    says the ``ways`` the client may send it."""
    if not has_token(headers, token):
        raise ApiError(
            401,
            f"missing or wrong proxy token: send {ways} with the token contextfold serve was given",
            code="invalid_api_key",
        )


def upstream_headers(
    headers: Mapping[str, str], token: str | None, client: HeaderFamily, upstream: HeaderFamily
) -> dict[str, str]:
    """What goes upstream with a client's call: its own credentials (never the proxy token)
    and its API's headers (a list header sent more than once: all its values, joined), when
    the upstream is of the client's provider (``client`` and ``upstream``: their APIs'
    families); a client's key for one provider never goes to another's server; a value that
    is not printable ASCII is a 400 naming the header. Never kept."""
    if client.name != upstream.name:
        return {}
    out = {name: _value(headers, name, client) for name in client.passed if name in headers}
    for name in ("authorization", "x-api-key", client.key or ""):  # "": nothing to check
        _check_header(name, headers.get(name, ""))
    for name, value in out.items():
        _check_header(name, value)
    auth = upstream_auth(headers, token)
    if auth:
        out["Authorization"] = auth
    key = headers.get(client.key, "") if client.key else ""
    if client.key and key and not _is_token(key, token):
        out[client.key] = key
    return out


def _value(headers: Mapping[str, str], name: str, family: HeaderFamily) -> str:
    """A header's value; every value of a list header sent more than once, joined (as HTTP
    allows), so each beta a client names goes upstream."""
    if name in family.lists and isinstance(headers, Headers):
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
