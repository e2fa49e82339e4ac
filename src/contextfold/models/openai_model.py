"""Any OpenAI-compatible chat server (vLLM, SGLang, llama.cpp, Ollama, OpenAI) via ``openai``.

Messages go out in canonical OpenAI form and come back through
:func:`~contextfold.core.messages.from_openai`, with the server's prefix-cache hits in the
usage; transient failures are retried by the SDK, the rest raised as a ``ModelError``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from contextfold.core.errors import MessageFormatError
from contextfold.core.messages import AssistantMessage, Message, from_openai, to_openai
from contextfold.core.protocols import Completion, Usage
from contextfold.models._tools import ModelError, import_optional

__all__ = ["OpenAIModel"]

_RETRIED = frozenset({408, 409, 429})
_HINT = "pip install 'contextfold[openai]' (or pip install openai)"


class OpenAIModel:
    """A chat model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    The key is ``api_key``, else ``OPENAI_API_KEY``, else (for a local server given by
    ``base_url``) the placeholder ``"EMPTY"``. ``extra_body`` is merged into every request (e.g.
    ``{"chat_template_kwargs": {"enable_thinking": False}}`` for vLLM). ``max_tokens_field``
    names the request field for ``max_tokens`` (OpenAI's reasoning models want
    ``"max_completion_tokens"``).

    Tool schemas pass through as given; the reply's content, tool calls and
    ``reasoning_content``/``reasoning`` are parsed. Usage includes
    ``prompt_tokens_details.cached_tokens`` (or DeepSeek's ``prompt_cache_hit_tokens``). Connection
    errors, timeouts, 408/409/429 and 5xx are retried by the SDK with exponential backoff (0.5 s
    doubling to 8 s, with jitter, or as ``Retry-After`` says), ``max_retries`` times. A
    ``response_schema`` is sent as ``response_format`` (``json_schema``); a server that refuses it
    (HTTP 400 or 422, or 404/501 for the feature) is asked again without it, and not asked with it
    again: the caller validates the reply (and may repair it) either way.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        temperature: float | None = None,
        extra_body: Mapping[str, Any] | None = None,
        max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens",
    ) -> None:
        openai = import_optional("openai", hint=_HINT, what="OpenAIModel")
        self.name = model
        self.base_url = base_url
        self.temperature = temperature
        self.extra_body = dict(extra_body or {})
        self.max_tokens_field = max_tokens_field
        self._openai = openai
        self._client = openai.OpenAI(
            api_key=_resolve_key(api_key, base_url),
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
        )
        self._max_retries = max_retries
        self.json_schema_supported = True
        """False once the server refused ``response_format``; then schemas are not sent."""

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]] = (),
        *,
        max_tokens: int | None = None,
        response_schema: Mapping[str, Any] | None = None,
    ) -> Completion:
        """One chat completion; raises :class:`ModelError` when the server fails for good."""
        request = self._request(messages, tools, max_tokens)
        if response_schema is not None and self.json_schema_supported:
            request["response_format"] = _response_format(response_schema)
        try:
            response = self._create(request)
        except self._openai.OpenAIError as exc:
            raise ModelError(self._describe(exc)) from exc
        return _parse(response, where=self._where())

    def _create(self, request: dict[str, Any]) -> Any:
        """Send the request; a server refusing ``response_format`` gets it again without."""
        try:
            return self._client.chat.completions.create(**request)
        except self._openai.APIStatusError as exc:
            if "response_format" not in request or exc.status_code not in (400, 404, 422, 501):
                raise
            self.json_schema_supported = False
            request = {k: v for k, v in request.items() if k != "response_format"}
            return self._client.chat.completions.create(**request)

    def _request(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]],
        max_tokens: int | None,
    ) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.name,
            "messages": [to_openai(m, parts=False) for m in messages],
        }
        if tools:
            request["tools"] = [dict(t) for t in tools]
        if max_tokens is not None:
            request[self.max_tokens_field] = max_tokens
        if self.temperature is not None:
            request["temperature"] = self.temperature
        if self.extra_body:
            request["extra_body"] = self.extra_body
        return request

    def _where(self) -> str:
        return f"model {self.name!r} at {self.base_url or 'api.openai.com'}"

    def _describe(self, exc: Exception) -> str:
        """A message naming the server, what failed, and what to do."""
        openai = self._openai
        where = self._where()
        tries = f"after {self._max_retries} retries"
        if isinstance(exc, openai.APITimeoutError):
            return f"{where} timed out {tries}; raise timeout= or check the server's load"
        if isinstance(exc, openai.APIConnectionError):
            return f"{where} cannot be reached {tries} (is the server running?): {exc}"
        if isinstance(exc, openai.AuthenticationError):
            return f"{where} refused the API key (401); set OPENAI_API_KEY or pass api_key="
        if isinstance(exc, openai.APIStatusError):
            code = exc.status_code
            retried = tries if code in _RETRIED or code >= 500 else "(not retried)"
            return f"{where} answered HTTP {code} {retried}: {exc.message}"
        return f"{where} failed: {exc}"


def _response_format(schema: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {"name": "reply", "schema": dict(schema), "strict": False},
    }


def _resolve_key(api_key: str | None, base_url: str | None) -> str:
    key = api_key or os.environ.get("OPENAI_API_KEY")
    if key:
        return key
    if base_url is not None:
        return "EMPTY"  # local servers (vLLM, SGLang, llama.cpp) accept any key
    raise ModelError("OpenAIModel needs an API key: set OPENAI_API_KEY or pass api_key=")


def _parse(response: Any, *, where: str) -> Completion:
    """The reply and usage of a ``ChatCompletion``."""
    choices = getattr(response, "choices", None)
    if not choices:
        raise ModelError(f"{where} returned no choices: {str(response)[:200]}")
    data = choices[0].message.to_dict(exclude_none=True)
    try:
        message = from_openai(data)
    except MessageFormatError as exc:
        raise ModelError(f"{where} returned a message contextfold cannot read: {exc}") from exc
    if not isinstance(message, AssistantMessage):
        raise ModelError(f"{where} returned a {message.role!r} message, not an assistant one")
    usage = response.usage.to_dict() if getattr(response, "usage", None) is not None else {}
    return Completion(message, _usage(usage))


def _usage(usage: Mapping[str, Any]) -> Usage:
    details = usage.get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens")
    if cached is None:
        cached = usage.get("prompt_cache_hit_tokens")  # DeepSeek
    return Usage(
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        cached_tokens=int(cached or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
    )
