"""Anthropic's Messages API: its routes (``POST /v1/messages``, ``count_tokens``), requests read
into history steps with their cache breakpoints kept apart, answers written back whole or
streamed, and the wire to an Anthropic upstream."""

from __future__ import annotations

from contextfold.serve.apis.anthropic._routes import anthropic_endpoints
from contextfold.serve.apis.anthropic._wire import AnthropicWire
from contextfold.serve.apis.spec import ApiSpec

__all__ = ["ANTHROPIC"]

ANTHROPIC = ApiSpec("anthropic", "Anthropic Messages", anthropic_endpoints, AnthropicWire)
