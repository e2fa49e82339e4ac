"""Gemini's words for what every API says: its error shape (:func:`gemini_error`) and its
usage (:func:`read_usage`, :func:`gemini_usage`); its finish reasons are in :mod:`._stops`."""

from __future__ import annotations

from typing import Any

from contextfold.serve.errors import ApiError, UpstreamError

__all__ = ["STATUS", "gemini_error", "gemini_usage", "read_usage"]

STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: "NOT_FOUND",
    409: "ABORTED",
    413: "INVALID_ARGUMENT",
    415: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
"""Google's status name for each HTTP status (``google.rpc.Code``)."""
_NAMES = frozenset(STATUS.values()) | {"FAILED_PRECONDITION", "OUT_OF_RANGE", "UNKNOWN"}


def gemini_error(exc: ApiError) -> tuple[int, dict[str, Any]]:
    """Google's shape: ``{"error": {"code", "message", "status"}}``, the field at fault named
    at the start of the message. A Gemini upstream's error keeps its status name and its
    ``details`` (a quota's ``RetryInfo``); an overloaded upstream of any API is a 503
    ``UNAVAILABLE`` (what Gemini CLI retries)."""
    status = exc.status
    name = STATUS.get(status, "INTERNAL" if status >= 500 else "UNKNOWN")
    details: list[dict[str, Any]] = []
    if isinstance(exc, UpstreamError):
        if exc.overloaded:
            status, name = 503, "UNAVAILABLE"
        elif exc.api == "gemini" and exc.error_type in _NAMES:
            name = str(exc.error_type)
        details = exc.details if exc.api == "gemini" else []
    message = exc.message
    if exc.param and not message.startswith(exc.param):
        message = f"{exc.param}: {message}"
    error = {"code": status, "message": message, "status": name}
    return status, {"error": {**error, "details": details} if details else error}


def read_usage(usage: Any) -> dict[str, int]:
    """``usageMetadata`` as a call's usage (thoughts count as completion tokens)."""
    usage = usage if isinstance(usage, dict) else {}
    counts = {k: usage.get(k) or 0 for k in _USAGE}
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in counts.values()):
        raise UpstreamError(502, f"upstream usage is not a count of tokens: {usage!r:.200}")
    return {
        "prompt_tokens": counts["promptTokenCount"],
        "cached_tokens": counts["cachedContentTokenCount"],
        "cache_write_tokens": 0,
        "completion_tokens": counts["candidatesTokenCount"] + counts["thoughtsTokenCount"],
    }


_USAGE = ("promptTokenCount", "cachedContentTokenCount", "candidatesTokenCount",
          "thoughtsTokenCount")  # fmt: skip


def gemini_usage(usage: dict[str, int]) -> dict[str, int]:
    """A call's usage as ``usageMetadata``."""
    prompt, out = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
    written = {"promptTokenCount": prompt, "candidatesTokenCount": out}
    if usage.get("cached_tokens"):
        written["cachedContentTokenCount"] = usage["cached_tokens"]
    return {**written, "totalTokenCount": prompt + out}
