"""Gemini's API: its routes (``POST /v1beta/models/{model}:generateContent``,
``:streamGenerateContent``, ``:countTokens``), requests read into history steps with their
thought signatures kept, answers written back whole or streamed, and the wire to a Gemini
upstream (which serves every API)."""

from __future__ import annotations

from contextfold.serve.apis.gemini._errors import gemini_error
from contextfold.serve.apis.gemini._routes import gemini_endpoints, gemini_listing, openai_listing
from contextfold.serve.apis.gemini._wire import GeminiWire
from contextfold.serve.apis.spec import ApiSpec

__all__ = ["GEMINI"]

GEMINI = ApiSpec(
    "gemini",
    "Gemini generateContent",
    gemini_endpoints,
    GeminiWire,
    errors=gemini_error,
    base_path="/v1beta",
    example_url="https://generativelanguage.googleapis.com",
    listed=gemini_listing,
    as_openai=openai_listing,
    serves_all=True,
    portable=True,
)
