"""``--upstream local``: the embedded SmolLM2-135M served in-process, so the proxy runs offline.
Each request is fitted to a window it reads in about half a minute
(:mod:`~contextfold.serve.upstream.local_fit`) and its reply capped (:data:`REPLY`); each reduction
is
logged once and every call at INFO, so ``contextfold wrap``'s log shows what happened. Replies
are computed whole, then streamed as one content chunk, the tool calls and a usage chunk (the
engine's prefix-cache reuse as ``cached_tokens``)."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from contextfold.core.errors import ContextFoldError
from contextfold.core.messages import from_openai, to_openai
from contextfold.core.protocols import Completion, WindowedModel
from contextfold.models._grammar import SchemaRefused
from contextfold.serve.errors import ApiError, UpstreamError
from contextfold.serve.exchange import Wire
from contextfold.serve.upstream.local_fit import Fitted, fit_window
from contextfold.serve.upstream.pool import Pool

__all__ = ["REPLY", "WINDOW", "LocalUpstream", "completion_body"]

_log = logging.getLogger(__name__)

WINDOW = 4096
"""Prompt tokens the embedded model reads at most per call: ~40 s at the ~110 tokens a second
it reads on two cores (a whole 8,192-token context takes over a minute, longer than some
CLIs wait in silence, and a 135M model answers worse from it)."""
REPLY = 1024
"""Tokens a reply has at most (~17 s at ~60 a second): the CLIs ask for up to 128,000, and a
greedy small model can repeat itself until the cap."""


def completion_body(completion: Completion, model: str) -> dict[str, Any]:
    """An OpenAI ``chat.completion`` dict for one completion."""
    message = to_openai(completion.message)
    usage = completion.usage
    finish = "tool_calls" if completion.message.tool_calls else "stop"
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.prompt_tokens + usage.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
        },
    }


class LocalUpstream:
    """A :class:`~contextfold.core.protocols.WindowedModel` behind the upstream interface
    (the embedded model by default; any model the factory builds), each request fitted to
    ``window`` prompt tokens (at most its context less ``reply``) and replies capped at
    ``reply`` tokens."""

    def __init__(
        self,
        make_model: Callable[[], WindowedModel],
        *,
        wire: Wire,
        window: int = WINDOW,
        reply: int = REPLY,
    ) -> None:
        self._make = make_model
        self._model: WindowedModel | None = None
        self._window = window
        self._reply = reply
        self._said: set[str] = set()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="contextfold-local")
        self._busy = 0
        self.wire = wire
        """Chat Completions' (the embedded model reads Chat messages): given by the builder."""

    @property
    def name(self) -> str:
        return "local"

    async def complete(
        self, body: dict[str, Any], headers: Mapping[str, str], query: str = "", *, path: str = ""
    ) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        self._busy += 1
        try:
            completion = await loop.run_in_executor(self._pool, self._complete, body)
        finally:
            self._busy -= 1
        return completion_body(completion, self._model.name if self._model else "local")

    async def stream(
        self, body: dict[str, Any], headers: Mapping[str, str], query: str = "", *, path: str = ""
    ) -> _Chunks:
        return _Chunks(await self.complete(body, headers))

    async def models(self, headers: Mapping[str, str]) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        model = await loop.run_in_executor(self._pool, self._loaded)
        return {"object": "list", "data": [{"id": model.name, "object": "model"}]}

    async def probe(self) -> str | None:
        return None  # in this process: loaded on the first call, which says if it cannot

    def pool(self) -> Pool:
        return Pool(self._busy, 1)

    async def aclose(self) -> None:
        self._pool.shutdown(wait=False)

    def _loaded(self) -> WindowedModel:
        if self._model is None:
            try:
                self._model = self._make()
            except ContextFoldError as exc:
                raise UpstreamError(502, f"the embedded model could not load: {exc}") from exc
        return self._model

    def _complete(self, body: dict[str, Any]) -> Completion:
        model = self._loaded()
        try:
            messages = [from_openai(m) for m in body["messages"]]  # no parts: sent without
        except ContextFoldError as exc:
            raise ApiError(400, str(exc), param="messages") from exc
        start = time.perf_counter()
        try:
            window = min(self._window, model.n_ctx - self._reply)
            fitted = fit_window(messages, body.get("tools") or (), model, window)
            self._tell(fitted, window, model.name)
            completion = self._answer(model, fitted, body)
        except ContextFoldError as exc:
            _log.warning("contextfold serve: the embedded model failed: %s", exc)
            raise UpstreamError(502, f"the embedded model failed: {exc}") from exc
        usage = completion.usage
        _log.info(
            "contextfold serve: %s read %s prompt tokens (%s from its cache) and wrote %s "
            "in %.1f s",
            model.name,
            f"{usage.prompt_tokens:,}",
            f"{usage.cached_tokens:,}",
            f"{usage.completion_tokens:,}",
            time.perf_counter() - start,
        )
        return completion

    def _answer(self, model: WindowedModel, fitted: Fitted, body: Mapping[str, Any]) -> Completion:
        """The reply, bound to the JSON schema the client asks for where llama.cpp can build
        its grammar (else free text, said once): a reply that must be that JSON calls no tool
        (a strategy offers its own tools on every request)."""
        limit, schema = self._max_tokens(body), reply_schema(body)
        if schema is not None:
            try:
                return model.complete(fitted.messages, max_tokens=limit, response_schema=schema)
            except SchemaRefused as exc:  # any other failure is the call's
                self._once("schema", f"a reply's JSON schema could not be bound ({exc}): free text")
        return model.complete(fitted.messages, fitted.tools, max_tokens=limit)

    def _max_tokens(self, body: Mapping[str, Any]) -> int | None:
        """The client's ``max_tokens``, at most ``reply`` (the cap said once); None: the
        model's own default."""
        asked = body.get("max_completion_tokens", body.get("max_tokens"))
        if not isinstance(asked, int) or asked <= self._reply:
            return asked if isinstance(asked, int) else None
        self._once(
            "reply",
            f"replies are capped at {self._reply:,} tokens (the client asks up to {asked:,})",
        )
        return self._reply

    def _tell(self, fitted: Fitted, window: int, name: str) -> None:
        """Each kind of reduction, said once (what the first such request lost)."""
        for kind, what in fitted.reductions.items():
            self._once(kind, f"to fit {name}'s window of {window:,} prompt tokens, {what}")

    def _once(self, kind: str, message: str) -> None:
        if kind not in self._said:
            self._said.add(kind)
            _log.warning("contextfold serve: %s (said once)", message)


def reply_schema(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The JSON schema a Chat body's ``response_format`` asks the reply to follow (any object
    for ``json_object``); None: free text."""
    fmt = body.get("response_format")
    kind = fmt.get("type") if isinstance(fmt, Mapping) else None
    if kind not in ("json_object", "json_schema"):
        return None
    named = fmt.get("json_schema") if kind == "json_schema" else None  # type: ignore[union-attr]
    schema = named.get("schema") if isinstance(named, Mapping) else None
    return schema if isinstance(schema, Mapping) else {"type": "object"}


class _Chunks:
    """A whole completion replayed as stream chunks."""

    def __init__(self, body: dict[str, Any]) -> None:
        self._body = body

    async def __aiter__(self) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        body = self._body
        head = {k: body[k] for k in ("id", "created", "model")}
        head["object"] = "chat.completion.chunk"
        choice = body["choices"][0]
        delta = {k: v for k, v in choice["message"].items() if v is not None}
        for i, call in enumerate(delta.get("tool_calls", ())):
            call["index"] = i
        yield "", {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        finish = {"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}
        yield "", {**head, "choices": [finish]}
        yield "", {**head, "choices": [], "usage": body["usage"]}

    async def aclose(self) -> None:
        return None
