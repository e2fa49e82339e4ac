"""The errors an upstream answers, read in any API's words: an error answer's status,
message, type, code and retry headers (:func:`answered_error`), and an error sent as a
stream event (:func:`streamed_error`), each an :class:`~.errors.UpstreamError` the client
gets in its own API (:mod:`..edge.routes`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from contextfold.serve.edge.body import NotPortable, strict_json
from contextfold.serve.errors import UpstreamError, event_status

__all__ = ["answered_error", "streamed_error"]


def answered_error(
    response: httpx.Response, where: str, api: str, scrub: Callable[[str], str]
) -> UpstreamError:
    """The error the upstream answered: its status, message, type, code, retry headers."""
    try:
        data = strict_json(response.content)
    except NotPortable:
        data = None
    error = _error_of(data)
    detail = _message(data) if isinstance(data, dict) else response.text[:500].strip()
    text = f"upstream {where} answered {response.status_code}: {detail or response.reason_phrase}"
    return UpstreamError(
        response.status_code,
        scrub(text),
        code=_name(error.get("code")),
        api=api,
        error_type=_name(error.get("type", error.get("status"))),  # Google's: its status
        headers=response.headers,
        details=error.get("details"),
    )


def streamed_error(chunk: dict[str, Any], where: str, api: str) -> UpstreamError:
    """An error event (Anthropic's ``{"type": "error", "error": {...}}``, OpenAI's
    ``{"type": "error", "code": ...}`` or ``{"error": {...}}``, Gemini's ``{"error": {"code":
    503, "status": ...}}``) as the upstream's error."""
    error = _error_of(chunk)
    kind, code = _name(error.get("type")), _name(error.get("code"))
    kind = None if kind == "error" else kind
    status = event_status(kind, code)
    number = error.get("code")
    if isinstance(number, int) and 400 <= number < 600:  # Google's: an HTTP status, named
        kind, status = _name(error.get("status")), number
    message = f"upstream {where}: {_message(chunk)}"
    details = error.get("details")
    return UpstreamError(status, message, code=code, api=api, error_type=kind, details=details)


def _error_of(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        return {}
    error = data.get("error")
    return error if isinstance(error, dict) else data


def _name(value: Any) -> str | None:
    """An error type or code as a short identifier (anything else is dropped)."""
    if isinstance(value, str) and 0 < len(value) <= 64 and value.isidentifier():
        return value
    return None


def _message(data: dict[str, Any]) -> str:
    error = data.get("error", data)
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)
