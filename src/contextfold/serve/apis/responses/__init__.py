"""OpenAI's Responses API: its routes (``POST``, ``GET`` and ``DELETE /v1/responses``), requests
read into a :class:`._request.ResponsesRequest` (history steps, ``previous_response_id`` from
the answers kept, each custom tool's call type), answers written back whole or streamed,
errors in OpenAI's shape (overloaded as Codex reads it), and the wire to a Responses upstream.
"""

from __future__ import annotations

from contextfold.serve.apis.responses._errors import responses_error
from contextfold.serve.apis.responses._routes import responses_endpoints
from contextfold.serve.apis.responses._wire import ResponsesWire
from contextfold.serve.apis.spec import ApiSpec

__all__ = ["RESPONSES"]

RESPONSES = ApiSpec(
    "responses",
    "OpenAI Responses",
    responses_endpoints,
    ResponsesWire,
    errors=responses_error,
    example_url="https://api.openai.com/v1",
)
