"""A scripted Gemini API server with Gemini's implicit prefix caching, for offline tests.

A real HTTP server the google-genai SDK and Gemini CLI talk to (:class:`ScriptedGemini`): it
refuses what the real API refuses, in its error shape, signs what its model writes as Gemini 3
does, and reports cached tokens as Gemini does, so a proxy that rewrites a conversation wrongly,
drops a thought signature or breaks the cache fails a test.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qs

from contextfold.testing.upstreams._cache import AutomaticCache, Bill
from contextfold.testing.upstreams._gemini_checks import check_body, normalize
from contextfold.testing.upstreams._gemini_parts import (
    function_call,
    gemini_prompt,
    part_text,
    sign,
    text,
    thought,
)
from contextfold.testing.upstreams._gemini_stream import json_array, sse, stream_chunks
from contextfold.testing.upstreams._http import (
    CHARS_PER_TOKEN,
    Answer,
    Received,
    Script,
    ScriptedHTTP,
    ScriptEnded,
    tokens,
)

__all__ = ["GeminiReply", "ScriptedGemini", "echo", "function_call", "text", "thought"]

GeminiReply = str | list[dict[str, Any]]
"""A reply: plain text, or the parts of the model's content (:func:`text`, :func:`thought`,
:func:`function_call`); the first function call, or else the last part, is signed."""

STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
ROUTE = re.compile(
    r"/(v1beta|v1)/models/([^/:]+):(generateContent|streamGenerateContent|countTokens)"
)
MODEL = re.compile(r"/(v1beta|v1)/models(?:/([^/:]+))?")
NO_KEY = (
    "Method doesn't allow unregistered callers (callers without established identity). "
    "Please use API Key or other form of API consumer identity to call this API."
)
OAUTH = (
    "Request had invalid authentication credentials. Expected OAuth 2 access token, login "
    "cookie or other valid authentication credential."
)


def echo(body: dict[str, Any]) -> GeminiReply:
    """Answers ``ok: <the last content's text, first 40 characters>``."""
    parts = body["contents"][-1].get("parts") or []
    said = " ".join(str(p["text"]) for p in parts if "text" in p)
    return f"ok: {said[:40]}"


class ScriptedGemini(ScriptedHTTP):
    """A Gemini-style upstream; :attr:`url` is the SDK's ``base_url`` (no version).

    It answers ``POST /v1beta/models/{model}:generateContent``, ``:streamGenerateContent``
    (``?alt=sse`` events, or by default one JSON array written chunk by chunk) and
    ``:countTokens``, and ``GET /v1beta/models`` and ``/v1beta/models/{model}``, on the
    loopback address, with replies scripted like :class:`~contextfold.models.ScriptedModel`'s
    (a list used in order, or a function of the request body, its field names in camelCase).
    The key comes in ``x-goog-api-key`` or ``?key=``; the body is checked as the real API
    checks it (:mod:`contextfold.testing.upstreams._gemini_checks`); errors are Google's shape
    (``{"error": {"code", "message", "status"}}``). Thoughts are returned only under
    ``thinkingConfig.includeThoughts`` and counted in ``thoughtsTokenCount`` either way;
    ``maxOutputTokens`` cuts the reply (``finishReason: MAX_TOKENS``). Usage reports
    ``cachedContentTokenCount`` from an
    :class:`~contextfold.testing.upstreams._cache.AutomaticCache`
    (Gemini's implicit caching: a prompt's longest prefix seen before, from ``min_cache_tokens``
    on in steps of ``cache_step_tokens``; Google publishes the minimum, not the step).
    Function calls carry no ``id`` unless ``call_ids`` (the Gemini API leaves it out).
    """

    def __init__(
        self,
        replies: Iterable[GeminiReply] | Callable[[dict[str, Any]], GeminiReply] = echo,
        *,
        api_key: str | None = None,
        models: Iterable[str] | None = None,
        min_cache_tokens: int = 2048,
        cache_step_tokens: int = 128,
        call_ids: bool = False,
        chunk_delay: float = 0.0,
        port: int = 0,
    ) -> None:
        super().__init__(chunk_delay=chunk_delay, port=port)
        self.script: Script[GeminiReply] = Script(replies)
        self.api_key = api_key
        """The only key accepted (None: any non-empty key)."""
        self.models = None if models is None else list(models)
        """The models served (None: any name)."""
        self.cache = AutomaticCache(min_tokens=min_cache_tokens, step_tokens=cache_step_tokens)
        self.call_ids = call_ids
        self.fail: tuple[int, str] | None = None
        """When set, every generate call is answered with this status and message."""
        self.stream_error: tuple[int, str] | None = None
        """When set, a stream stops after its first chunk with an error chunk of this status."""
        self.bills: list[Bill] = []
        """What each answered generate call was billed for, in order."""
        self.url = self.root
        self._ids = itertools.count(1)

    @property
    def calls(self) -> list[dict[str, Any]]:
        """The bodies of the generate requests (streamed or not) received, in order."""
        return [r.body for r in self.requests if r.path.endswith("Content")]

    def __enter__(self) -> ScriptedGemini:
        super().__enter__()
        return self

    def answer(self, received: Received) -> Answer:
        query = parse_qs(received.query)
        route = ROUTE.fullmatch(received.path)
        listed = MODEL.fullmatch(received.path)
        if route is None and (listed is None or received.method != "GET"):
            return self.error(404, f"Method not found: {received.method} {received.path}")
        refused = self._auth(received.headers, query)
        if refused is not None:
            return refused
        if route is None:
            return self._listing(listed.group(2) if listed else None)
        version, model, method = route.groups()
        if received.method != "POST":
            return self.error(404, f"Method not found: {received.method} {received.path}")
        if self.models is not None and model not in self.models:
            return self.error(
                404,
                f"models/{model} is not found for API version {version}, or is not supported "
                f"for {method}. Call ListModels to see the list of available models and their "
                "supported methods.",
            )
        if not isinstance(received.body, dict):
            return self.error(400, "Invalid JSON payload received. Expected an object.")
        if method == "countTokens":
            return self._count(received.body, model)
        body = normalize(received.body)
        problem = check_body(body, model)
        if problem is not None:
            return self.error(400, problem)
        if self.fail is not None:
            return self.error(*self.fail)
        return self._generate(body, model, stream=method != "generateContent", query=query)

    def refuse(self, status: int, message: str) -> Answer:
        return self.error(status, message)

    def error(self, status: int, message: str) -> Answer:
        """An error in Google's shape."""
        return Answer(status=status, body={"error": self._error(status, message)})

    def _error(self, status: int, message: str) -> dict[str, Any]:
        return {"code": status, "message": message, "status": STATUS.get(status, "UNKNOWN")}

    def _auth(self, headers: dict[str, str], query: dict[str, list[str]]) -> Answer | None:
        key = headers.get("x-goog-api-key") or (query.get("key") or [""])[0]
        if not key:
            bearer = headers.get("authorization", "").lower().startswith("bearer ")
            return self.error(401, OAUTH) if bearer else self.error(403, NO_KEY)
        if self.api_key is not None and key != self.api_key:
            answer = self.error(400, "API key not valid. Please pass a valid API key.")
            reason = {"reason": "API_KEY_INVALID", "domain": "googleapis.com"}
            assert answer.body is not None
            answer.body["error"]["details"] = [
                {"@type": "type.googleapis.com/google.rpc.ErrorInfo", **reason}
            ]
            return answer
        return None

    def _listing(self, model: str | None) -> Answer:
        names = self.models if self.models is not None else ["gemini-scripted"]
        if model is None:
            return Answer(body={"models": [_model(n) for n in names]})
        if self.models is not None and model not in self.models:
            return self.error(404, f"models/{model} is not found")
        return Answer(body=_model(model))

    def _count(self, raw: dict[str, Any], model: str) -> Answer:
        for name in raw:
            if name not in {"contents", "generateContentRequest", "generate_content_request"}:
                return self.error(400, f'Invalid JSON payload received. Unknown name "{name}".')
        inner = raw.get("generateContentRequest") or raw.get("generate_content_request")
        body = normalize(inner if isinstance(inner, dict) else {"contents": raw.get("contents")})
        problem = check_body(body, model, signatures=False)
        if problem is not None:
            return self.error(400, problem)
        total = tokens(gemini_prompt(body))
        details = [{"modality": "TEXT", "tokenCount": total}]
        return Answer(body={"totalTokens": total, "promptTokensDetails": details})

    def _generate(
        self, body: dict[str, Any], model: str, *, stream: bool, query: dict[str, list[str]]
    ) -> Answer:
        try:
            reply = self.script.next(body)
        except ScriptEnded as e:
            return self.error(500, str(e))
        response = self._response(body, model, reply)
        if not stream:
            return Answer(body=response)
        chunks = stream_chunks(response)
        error = None if self.stream_error is None else {"error": self._error(*self.stream_error)}
        if (query.get("alt") or [""])[0] == "sse":
            return Answer(chunks=sse(chunks, error), headers={"Content-Type": "text/event-stream"})
        kind = {"Content-Type": "application/json; charset=UTF-8"}
        return Answer(chunks=json_array(chunks, error), headers=kind)

    def _response(self, body: dict[str, Any], model: str, reply: GeminiReply) -> dict[str, Any]:
        config = body.get("generationConfig") or {}
        limit = config.get("maxOutputTokens")
        parts, finish = _limit(self._parts(reply, model), limit if isinstance(limit, int) else None)
        thinking = config.get("thinkingConfig") or {}
        shown = [p for p in parts if thinking.get("includeThoughts") or not p.get("thought")]
        thoughts = sum(tokens(part_text(p)) for p in parts if p.get("thought"))
        out = sum(tokens(part_text(p)) for p in parts if not p.get("thought"))
        cached = self.cache.lookup(gemini_prompt(body))
        self.bills.append(Bill(cached, out + thoughts))
        prompt = cached.total
        usage: dict[str, Any] = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": out,
            "totalTokenCount": prompt + out + thoughts,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
        }
        if cached.read:
            usage["cachedContentTokenCount"] = cached.read
            usage["cacheTokensDetails"] = [{"modality": "TEXT", "tokenCount": cached.read}]
        if thoughts:
            usage["thoughtsTokenCount"] = thoughts
        candidate = {"content": {"parts": shown, "role": "model"}, "finishReason": finish}
        return {
            "candidates": [{**candidate, "index": 0}],
            "usageMetadata": usage,
            "modelVersion": model,
            "responseId": f"scripted{next(self._ids)}",
        }

    def _parts(self, reply: GeminiReply, model: str) -> list[dict[str, Any]]:
        parts = [text(reply)] if isinstance(reply, str) else [dict(p) for p in reply]
        for part in parts:
            call = part.get("functionCall")
            if self.call_ids and isinstance(call, dict) and "id" not in call:
                part["functionCall"] = {"id": f"call_scripted{next(self._ids)}", **call}
        calls = [p for p in parts if "functionCall" in p]
        visible = [p for p in parts if not p.get("thought")]
        signed = calls[:1] or (visible or parts)[-1:]
        for part in signed:
            part.setdefault("thoughtSignature", sign(model))
        return parts


def _limit(parts: list[dict[str, Any]], limit: int | None) -> tuple[list[dict[str, Any]], str]:
    """The parts that fit in ``limit`` output tokens (the last text cut), and the finish reason."""
    if limit is None:
        return parts, "STOP"
    out, left = [], limit
    for part in parts:
        cost = tokens(part_text(part))
        if cost <= left:
            out.append(part)
            left -= cost
            continue
        if "text" in part and left > 0:
            out.append({**part, "text": str(part["text"])[: left * CHARS_PER_TOKEN]})
        return out, "MAX_TOKENS"
    return out, "STOP"


def _model(name: str) -> dict[str, Any]:
    return {
        "name": f"models/{name}",
        "version": "001",
        "displayName": name,
        "inputTokenLimit": 1_048_576,
        "outputTokenLimit": 65_536,
        "supportedGenerationMethods": ["generateContent", "countTokens"],
        "thinking": True,
    }
