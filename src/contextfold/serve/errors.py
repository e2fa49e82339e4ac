"""Errors the proxy answers with, in the OpenAI shape: ``{"error": {message, type, param, code}}``
(each API's clients get them in its own shape: :attr:`~.apis.spec.ApiSpec.errors`).

::

    ApiError                a request the proxy refuses (4xx) or could not serve (5xx)
    └── UpstreamError       the upstream failed: unreachable, or it answered an error
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["OVERLOADED_CODES", "RETRY_HEADERS", "ApiError", "UpstreamError", "event_status"]

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    413: "invalid_request_error",
    415: "invalid_request_error",
    429: "rate_limit_error",
}
RETRY_HEADERS = ("retry-after", "retry-after-ms", "x-should-retry")
"""An upstream error answer's headers that say when (or whether) to retry: passed on."""
OVERLOADED_CODES = ("server_is_overloaded", "slow_down")
"""OpenAI's error codes for an overloaded server (Codex reads them as ``ServerOverloaded``)."""
_KNOWN_TYPES = frozenset(
    {
        "invalid_request_error", "authentication_error", "permission_error", "not_found_error",
        "request_too_large", "rate_limit_error", "api_error", "timeout_error", "overloaded_error",
        "billing_error", "server_error", "service_unavailable_error", "insufficient_quota",
        "requests", "tokens",
    }
)  # fmt: skip
"""Error types of either API an upstream's answer keeps (any other is the status's type, so
an upstream cannot grow the labels of ``errors_total``)."""
_EVENT_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "rate_limit_exceeded": 429,
    "api_error": 500,
    "server_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
    "server_is_overloaded": 503,
    "slow_down": 503,
}


class ApiError(Exception):
    """A request the proxy answers with an error status and an OpenAI-style body."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        kind: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.kind = kind or _TYPES.get(status, "server_error" if status >= 500 else "api_error")

    def body(self) -> dict[str, Any]:
        """The OpenAI-style error object."""
        return {
            "error": {
                "message": self.message,
                "type": self.kind,
                "param": self.param,
                "code": self.code,
            }
        }


class UpstreamError(ApiError):
    """The upstream model server failed.

    An error it answered keeps its status, its error ``type`` and ``code`` (``api``: the
    upstream's API, whose words they are) and its retry headers, so a client reads the
    upstream's own answer in its own API (its :attr:`~.apis.spec.ApiSpec.errors`: an
    overloaded upstream is Anthropic's 529 ``overloaded_error`` or OpenAI's 503
    ``server_is_overloaded``). An
    upstream that could not be reached, or answered what the proxy cannot use, is a 502 of
    type ``upstream_error``. The message is the upstream's own, naming it.
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: str | None = None,
        api: str | None = None,
        error_type: str | None = None,
        headers: Mapping[str, str] | None = None,
        details: Any = None,
    ) -> None:
        known = error_type if error_type in _KNOWN_TYPES else None
        kind = known or ("upstream_error" if status == 502 else None)
        super().__init__(status, message, code=code, kind=kind)
        self.api = api
        self.error_type = error_type
        self.headers = {k: v for k, v in (headers or {}).items() if k.lower() in RETRY_HEADERS}
        self.upstream_status = status
        self.details = (
            [d for d in details if isinstance(d, dict)] if isinstance(details, list) else []
        )
        """Google's ``error.details`` (``RetryInfo``, ``QuotaFailure``): what a client of the
        upstream's API reads to wait, or to stop on a spent quota."""

    @property
    def overloaded(self) -> bool:
        """Whether the upstream said it is overloaded (in any API's words)."""
        return (
            self.status == 529
            or self.error_type == "overloaded_error"
            or self.code in OVERLOADED_CODES
        )


def event_status(error_type: str | None, code: str | None) -> int:
    """The status an error sent as a stream event stands for (its type's or code's in either
    API; 502 for one the proxy does not know)."""
    for name in (code, error_type):
        if name in _EVENT_STATUS:
            return _EVENT_STATUS[str(name)]
    return 502
