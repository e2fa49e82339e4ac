"""Anthropic's Messages API: its routes (``POST /v1/messages``, ``count_tokens``), requests read
into an :class:`._request.AnthropicRequest` (history steps, their cache breakpoints kept
apart), answers written back whole or streamed, errors in Anthropic's shape, and the wire to
an Anthropic upstream (its headers, ``x-api-key``, its base URL's ``/v1``).
"""

from __future__ import annotations

from contextfold.serve.apis.anthropic._errors import anthropic_error
from contextfold.serve.apis.anthropic._routes import anthropic_endpoints
from contextfold.serve.apis.anthropic._wire import AnthropicWire
from contextfold.serve.apis.spec import ApiSpec

__all__ = ["ANTHROPIC"]

ANTHROPIC = ApiSpec(
    "anthropic",
    "Anthropic Messages",
    anthropic_endpoints,
    AnthropicWire,
    errors=anthropic_error,
    base_path="/v1",
    example_url="https://api.anthropic.com",
)
