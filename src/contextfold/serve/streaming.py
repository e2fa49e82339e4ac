"""Streaming: putting upstream chunks back together, and the chunks the client gets.

Text (and reasoning) deltas go to the client as the upstream sends them. Tool-call deltas are
held until the round ends: only then is it known whether the model called one of the
strategy's own tools (answered by the proxy, never shown) or only the client's (sent whole,
re-indexed, in one chunk before the finish chunk).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from contextfold.serve.errors import UpstreamError
from contextfold.serve.replies import check_chunk, check_message
from contextfold.serve.upstream import ChunkStream

__all__ = ["Accumulator", "ClientStream", "Primed", "sse"]


def sse(data: dict[str, Any] | str) -> bytes:
    """One server-sent event carrying ``data`` (a dict as JSON, or ``[DONE]``)."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"data: {text}\n\n".encode()


@dataclass(slots=True)
class _Call:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Accumulator:
    """One round's streamed reply from the upstream named ``where``, put back together; each
    chunk checked as it comes (a malformed one is an UpstreamError)."""

    where: str
    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, _Call] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None

    def add(self, chunk: dict[str, Any]) -> dict[str, str]:
        """Take one chunk; returns the text deltas to forward now (may be empty)."""
        check_chunk(chunk, self.where)
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        out: dict[str, str] = {}
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            self.finish_reason = choice.get("finish_reason") or self.finish_reason
            delta = choice.get("delta") or {}
            text = delta.get("content")
            if isinstance(text, str) and text:
                self.content.append(text)
                out["content"] = text
            reasoning = delta.get("reasoning_content", delta.get("reasoning"))
            if isinstance(reasoning, str) and reasoning:
                self.reasoning.append(reasoning)
                out["reasoning_content"] = reasoning
            for raw in delta.get("tool_calls") or ():
                self._call_delta(raw)
        return out

    def _call_delta(self, raw: dict[str, Any]) -> None:
        call = self.calls.setdefault(raw.get("index", len(self.calls)), _Call())
        call.id = raw.get("id") or call.id
        fn = raw.get("function") or {}
        call.name = fn.get("name") or call.name
        if isinstance(fn.get("arguments"), str):
            call.arguments.append(fn["arguments"])

    def message(self) -> dict[str, Any]:
        """The round's assistant message, in OpenAI form (a 502 when the stream ended without
        a finish_reason, or left a tool call without a name)."""
        if self.finish_reason is None:
            raise UpstreamError(
                502, f"upstream {self.where} ended its stream without a finish_reason"
            )
        out: dict[str, Any] = {"role": "assistant", "content": "".join(self.content) or None}
        if self.reasoning:
            out["reasoning_content"] = "".join(self.reasoning)
        calls = [self.calls[i] for i in sorted(self.calls)]
        if calls:
            out["tool_calls"] = [
                {
                    "id": c.id or f"call_{uuid.uuid4().hex[:12]}",
                    "type": "function",
                    "function": {"name": c.name, "arguments": "".join(c.arguments)},
                }
                for c in calls
            ]
        return check_message(out, self.where, "streamed message")


class Primed:
    """An upstream stream whose first chunk is read (and checked) when it opens, so a stream
    that fails before any chunk fails before the client gets a status (a 502)."""

    def __init__(self, stream: ChunkStream, chunks: AsyncIterator[dict[str, Any]]) -> None:
        self._stream = stream
        self._chunks = chunks
        self._first: dict[str, Any] | None = None

    @classmethod
    async def open(cls, stream: ChunkStream, where: str) -> Primed:
        primed = cls(stream, aiter(stream))
        try:
            primed._first = await anext(primed._chunks)
            check_chunk(primed._first, where)
        except StopAsyncIteration:
            await stream.aclose()
            raise UpstreamError(
                502, f"upstream {where} ended its stream before any chunk"
            ) from None
        except BaseException:
            await stream.aclose()
            raise
        return primed

    async def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        if self._first is not None:
            first, self._first = self._first, None
            yield first
        async for chunk in self._chunks:
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


class ClientStream:
    """The chunks of the one completion the client sees (one id across every round)."""

    def __init__(self, model: str) -> None:
        self.id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        self.created = int(time.time())
        self.model = model
        self._role_sent = False

    def chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        if not self._role_sent:
            delta = {"role": "assistant", **delta}
            self._role_sent = True
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return sse({**self._head(), "choices": [choice]})

    def tool_calls(self, calls: list[dict[str, Any]]) -> bytes:
        indexed = [{"index": i, **c} for i, c in enumerate(calls)]
        return self.chunk({"tool_calls": indexed})

    def usage(self, usage: dict[str, Any]) -> bytes:
        return sse({**self._head(), "choices": [], "usage": usage})

    def _head(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
        }
