"""The errors a Responses client gets: OpenAI's shape, an overloaded upstream (of any API)
in the words Codex reads as overloaded."""

from __future__ import annotations

from typing import Any

from contextfold.serve.edge.routes import openai_error
from contextfold.serve.errors import OVERLOADED_CODES, ApiError, UpstreamError

__all__ = ["responses_error"]


def responses_error(exc: ApiError) -> tuple[int, dict[str, Any]]:
    """OpenAI's shape for a Responses client; an overloaded upstream is a 503 with the code
    ``server_is_overloaded`` (unless it said ``slow_down``), which Codex reads as overloaded."""
    if not (isinstance(exc, UpstreamError) and exc.overloaded):
        return openai_error(exc)
    code = exc.code if exc.code in OVERLOADED_CODES else "server_is_overloaded"
    body = exc.body()
    body["error"]["code"] = code
    return 503, body
