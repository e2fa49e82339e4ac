"""``--upstream local``: the embedded SmolLM2-135M served in-process, so the proxy runs offline.

Replies are computed whole (the engine has no token callback here), then streamed as one
content chunk, the tool calls, and a usage chunk. Usage reports the engine's own prefix-cache
reuse as ``prompt_tokens_details.cached_tokens``.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from contextfold.core.errors import ContextFoldError
from contextfold.core.messages import from_openai, to_openai
from contextfold.core.protocols import Completion, Model
from contextfold.serve.apis.chat.wire import ChatWire
from contextfold.serve.errors import ApiError, UpstreamError
from contextfold.serve.upstream import Pool

__all__ = ["LocalUpstream", "completion_body"]


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
    """A :class:`~contextfold.core.protocols.Model` behind the upstream interface (the
    embedded model by default; any model the factory builds)."""

    def __init__(self, make_model: Callable[[], Model]) -> None:
        self._make = make_model
        self._model: Model | None = None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="contextfold-local")
        self._busy = 0
        self.wire = ChatWire()

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

    def _loaded(self) -> Model:
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
        max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
        try:
            return model.complete(messages, body.get("tools") or (), max_tokens=max_tokens)
        except ContextFoldError as exc:
            raise UpstreamError(502, f"the embedded model failed: {exc}") from exc


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
