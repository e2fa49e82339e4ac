"""Errors the proxy answers with, in the OpenAI shape: ``{"error": {message, type, param, code}}``.

::

    ApiError                a request the proxy refuses (4xx) or could not serve (5xx)
    └── UpstreamError       the upstream failed: unreachable, or it answered an error
"""

from __future__ import annotations

from typing import Any

__all__ = ["ApiError", "UpstreamError"]

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    413: "invalid_request_error",
    415: "invalid_request_error",
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
    """The upstream model server failed. A 4xx from the upstream (a bad key, a prompt over its
    context) keeps its status, so the client sees its own mistake; an unreachable upstream or
    a 5xx becomes a 502. The message is the upstream's own."""

    def __init__(self, status: int, message: str, *, code: str | None = None) -> None:
        mapped = status if 400 <= status < 500 else 502
        kind = "upstream_error" if mapped == 502 else None
        super().__init__(mapped, message, code=code, kind=kind)
        self.upstream_status = status
