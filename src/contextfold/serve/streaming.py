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
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Accumulator", "ClientStream", "sse"]


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
    """One round's streamed reply, put back together."""

    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, _Call] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None

    def add(self, chunk: dict[str, Any]) -> dict[str, str]:
        """Take one chunk; returns the text deltas to forward now (may be empty)."""
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        out: dict[str, str] = {}
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
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
        call = self.calls.setdefault(int(raw.get("index", len(self.calls))), _Call())
        call.id = raw.get("id") or call.id
        fn = raw.get("function") or {}
        call.name = fn.get("name") or call.name
        if isinstance(fn.get("arguments"), str):
            call.arguments.append(fn["arguments"])

    def message(self) -> dict[str, Any]:
        """The round's assistant message, in OpenAI form."""
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
        return out


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
