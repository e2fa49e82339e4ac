"""The answer a Chat Completions client gets: a ``chat.completion``, or its chunks.

A stream starts at once with the role; text (and reasoning) go out as the upstream sends
them; the client's tool calls, held until the last round ends, go in one chunk before the
finish chunk; usage (summed over every upstream call) when the client asked for it; then
``[DONE]``.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from contextfold.core.messages import AssistantMessage, ToolCall, to_openai
from contextfold.serve.apis.chat._read import ChatRequest
from contextfold.serve.apis.chat._stops import to_chat
from contextfold.serve.edge.routes import openai_error
from contextfold.serve.edge.streaming import sse
from contextfold.serve.errors import ApiError
from contextfold.serve.exchange import ClientRequest, Delta, Reply, Stop

__all__ = ["ChatStream", "ChatWriter", "chat_usage"]


def chat_usage(usage: dict[str, int]) -> dict[str, Any]:
    """Usage in OpenAI's form."""
    prompt, completion = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": usage.get("cached_tokens", 0)},
    }


def _message(final: AssistantMessage, given: dict[str, Any]) -> dict[str, Any]:
    """The client's message: the upstream's own (its extra fields kept), the final's text and
    calls in it."""
    out = {k: v for k, v in given.items() if k != "tool_calls"}
    out.update(to_openai(final, parts=False))
    return out


class ChatWriter:
    """Chat Completions answers to ``request``."""

    def __init__(self, request: ChatRequest) -> None:
        self.request = request

    def respond(
        self, final: AssistantMessage, stop: Stop, usage: dict[str, int], last: Reply
    ) -> dict[str, Any]:
        raw = last.raw if last.raw is not None and "choices" in last.raw else None
        reply = dict(raw) if raw is not None else _head(self.request, "chat.completion")
        given = raw["choices"][0].get("message") or {} if raw is not None else {}
        choice = {"index": 0, "message": _message(final, given), "finish_reason": to_chat(stop)}
        reply["choices"] = [choice]
        reply["usage"] = chat_usage(usage)
        return reply

    def stream(self) -> ChatStream:
        return ChatStream(self.request)


def _head(request: ClientRequest, kind: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": kind,
        "created": int(time.time()),
        "model": str(request.body.get("model", "")),
    }


class ChatStream:
    """The chunks of the one completion the client sees (one id across every round)."""

    def __init__(self, request: ChatRequest) -> None:
        self.request = request
        self._head = _head(request, "chat.completion.chunk")
        self._role_sent = False
        self._called = 0

    def start(self) -> list[bytes]:
        """The first chunk at once, the role only (as OpenAI sends it): a client that hangs
        up after it, before the reply is whole, leaves nothing stored, as in every API."""
        return [self._chunk({"content": ""})]

    def delta(self, delta: Delta) -> list[bytes]:
        kind, value = delta
        if kind == "text":
            return [self._chunk({"content": value})]
        if kind == "reasoning":
            return [self._chunk({"reasoning_content": value})]
        if kind == "call" and isinstance(value, ToolCall):
            return [self._calls((value,))]
        return []

    def end(self, final: AssistantMessage, stop: Stop, usage: dict[str, int]) -> list[bytes]:
        events = [self._calls(final.tool_calls)] if final.tool_calls else []
        events.append(self._chunk({}, to_chat(stop)))
        if self.request.include_usage:
            events.append(sse({**self._head, "choices": [], "usage": chat_usage(usage)}))
        return [*events, sse("[DONE]")]

    def error(self, exc: ApiError) -> bytes:
        return sse(openai_error(exc)[1])

    def _calls(self, calls: tuple[ToolCall, ...]) -> bytes:
        written = to_openai(AssistantMessage(None, tool_calls=calls), parts=False)["tool_calls"]
        indexed = [{"index": self._called + i, **c} for i, c in enumerate(written)]
        self._called += len(calls)
        return self._chunk({"tool_calls": indexed})

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        if not self._role_sent:
            delta = {"role": "assistant", **delta}
            self._role_sent = True
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return sse({**self._head, "choices": [choice]})
