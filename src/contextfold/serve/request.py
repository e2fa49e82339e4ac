"""Reading a client's request: the body (size-limited JSON), its checks, its credentials."""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from contextfold.serve.body import decode_body
from contextfold.serve.conversation import Conversation, parse_conversation
from contextfold.serve.errors import ApiError

__all__ = [
    "ChatRequest",
    "check_token",
    "family_of",
    "has_token",
    "parse_chat",
    "read_body",
    "upstream_auth",
]

SESSION_HEADER = "x-contextfold-session"
TOKEN_HEADER = "x-contextfold-token"


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """A checked ``/v1/chat/completions`` request."""

    body: dict[str, Any]
    """The client's body; ``messages`` is replaced by the view before it goes upstream."""
    conversation: Conversation
    family: str
    stream: bool
    include_usage: bool
    tools: list[dict[str, Any]]

    @property
    def tool_names(self) -> set[str]:
        return {t["function"]["name"] for t in self.tools}


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


def parse_chat(data: bytes, headers: Mapping[str, str]) -> ChatRequest:
    """Decode and check a chat request; raises a 4xx :class:`ApiError` naming the problem."""
    body = decode_body(data)
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise ApiError(400, "'model' must be a non-empty string", param="model")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise ApiError(400, "'stream' must be true or false", param="stream")
    if body.get("n", 1) not in (1, None):
        raise ApiError(
            400, "'n' must be 1: the proxy keeps one history per conversation", param="n"
        )
    for key in _TOKEN_LIMITS:
        _check_limit(body, key)
    family = family_of(headers)
    options = body.get("stream_options")
    include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
    return ChatRequest(
        body=body,
        conversation=parse_conversation(body.get("messages"), family),
        family=family,
        stream=stream,
        include_usage=include_usage,
        tools=_tools(body.get("tools")),
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
    """The session family the client names (``X-Contextfold-Session``), or empty."""
    value = headers.get(SESSION_HEADER, "").strip()
    if len(value) > 200 or any(not (c.isalnum() or c in "-_.:~") for c in value):
        raise ApiError(
            400,
            "X-Contextfold-Session must be at most 200 characters of letters, digits and -_.:~",
            param="X-Contextfold-Session",
        )
    return value


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


def has_token(headers: Mapping[str, str], token: str | None) -> bool:
    """Whether the request carries ``token`` (as ``Authorization: Bearer`` or
    ``X-Contextfold-Token``); always with ``token`` None (auth is off)."""
    if token is None:
        return True
    given = [headers.get(TOKEN_HEADER, ""), _bearer(headers.get("authorization", ""))]
    return any(g and hmac.compare_digest(g.encode(), token.encode()) for g in given)


def check_token(headers: Mapping[str, str], token: str | None) -> None:
    """Raise a 401 unless the request carries ``token`` (see :func:`has_token`)."""
    if not has_token(headers, token):
        raise ApiError(
            401,
            "missing or wrong proxy token: send 'Authorization: Bearer TOKEN' or "
            "'X-Contextfold-Token: TOKEN' with the token contextfold serve was given",
            code="invalid_api_key",
        )


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
