"""The errors a Messages client gets, in Anthropic's shape (an upstream's own type kept, an
overloaded upstream of any API Anthropic's 529)."""

from __future__ import annotations

from typing import Any

from contextfold.serve.errors import ApiError, UpstreamError

__all__ = ["anthropic_error"]

_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def anthropic_error(exc: ApiError) -> tuple[int, dict[str, Any]]:
    """Anthropic's shape: ``{"type": "error", "error": {"type", "message"}}``; the field at
    fault is named at the start of the message (``messages.3.content.0: ...``). An Anthropic
    upstream's error keeps its type; an overloaded upstream of any API is a 529
    ``overloaded_error`` (what Claude Code retries and falls back on)."""
    status, kind = exc.status, _ANTHROPIC_TYPES.get(exc.status, "api_error")
    if isinstance(exc, UpstreamError):
        if exc.overloaded:
            status, kind = 529, "overloaded_error"
        elif exc.api == "anthropic" and exc.error_type:
            kind = exc.error_type
    message = exc.message
    if exc.param and not message.startswith(exc.param):
        message = f"{exc.param}: {message}"
    return status, {"type": "error", "error": {"type": kind, "message": message}}
