"""The answer an Anthropic Messages client gets: a ``message``, or its event stream.

Streamed, the events are Anthropic's: ``message_start``, ``ping``, then each content block
(text as the upstream sends it, a block for each of its text blocks; a thinking or server-tool
block whole, with its signature, from an Anthropic upstream; the client's tool calls in place
once the last round has ended), then ``message_delta`` (stop reason and usage, summed over
every upstream call) and ``message_stop``; a failure is an ``error`` event.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from contextfold.core.messages import AssistantMessage, ToolCall
from contextfold.core.wire.layout import layout_of
from contextfold.serve.apis.anthropic._errors import anthropic_error
from contextfold.serve.apis.anthropic._stops import to_anthropic
from contextfold.serve.apis.anthropic._write import API, assistant_blocks, tool_input
from contextfold.serve.edge.streaming import sse
from contextfold.serve.errors import ApiError
from contextfold.serve.exchange import ClientRequest, Delta, Reply, Stop

__all__ = ["AnthropicStream", "AnthropicWriter", "anthropic_usage"]


def anthropic_usage(usage: dict[str, int]) -> dict[str, Any]:
    """A call's usage in Anthropic's form (input counted apart from cache reads and writes)."""
    read, written = usage.get("cached_tokens", 0), usage.get("cache_write_tokens", 0)
    hour = usage.get("cache_write_1h_tokens", 0)
    return {
        "input_tokens": max(0, usage.get("prompt_tokens", 0) - read - written),
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": read,
        "cache_creation": {
            "ephemeral_5m_input_tokens": written - hour,
            "ephemeral_1h_input_tokens": hour,
        },
        "output_tokens": usage.get("completion_tokens", 0),
    }


class AnthropicWriter:
    """Messages answers to ``request``."""

    def __init__(self, request: ClientRequest) -> None:
        self.request = request

    def respond(
        self, final: AssistantMessage, stop: Stop, usage: dict[str, int], last: Reply
    ) -> dict[str, Any]:
        raw = last.raw if last.raw is not None and last.raw.get("type") == "message" else {}
        return {
            "id": raw.get("id") or _id(),
            "type": "message",
            "role": "assistant",
            "model": raw.get("model") or self.request.body["model"],
            "content": assistant_blocks(final, layout_of(final, API) or {}),
            "stop_reason": to_anthropic(stop),
            "stop_sequence": raw.get("stop_sequence"),
            "usage": anthropic_usage(usage),
        }

    def stream(self) -> AnthropicStream:
        return AnthropicStream(self.request)


def _id() -> str:
    return f"msg_{uuid.uuid4().hex[:24]}"


class AnthropicStream:
    """The events of one streamed answer (one message across every round)."""

    def __init__(self, request: ClientRequest) -> None:
        self.request = request
        self._index = 0
        self._text_open = False

    def start(self) -> list[bytes]:
        message = {
            "id": _id(),
            "type": "message",
            "role": "assistant",
            "model": self.request.body["model"],
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }
        return [_event("message_start", message=message), _event("ping")]

    def delta(self, delta: Delta) -> list[bytes]:
        kind, value = delta
        if kind == "text":
            out = [] if self._text_open else self._open({"type": "text", "text": ""})
            self._text_open = True
            delta_event = {"type": "text_delta", "text": value}
            return [*out, _event("content_block_delta", index=self._index, delta=delta_event)]
        if kind == "block" and isinstance(value, dict):
            return [*self._close_text(), *self._block(value)]
        if kind == "call" and isinstance(value, ToolCall):
            return [*self._close_text(), *self._call(value)]
        if kind == "break":
            return self._close_text()
        return []  # reasoning text of another API: not a signed thinking block

    def end(self, final: AssistantMessage, stop: Stop, usage: dict[str, int]) -> list[bytes]:
        events = self._close_text()
        for call in final.tool_calls:
            events += self._call(call)
        delta = {"stop_reason": to_anthropic(stop), "stop_sequence": None}
        events.append(_event("message_delta", delta=delta, usage=anthropic_usage(usage)))
        events.append(_event("message_stop"))
        return events

    def error(self, exc: ApiError) -> bytes:
        return sse(anthropic_error(exc)[1], "error")

    def _call(self, call: ToolCall) -> list[bytes]:
        block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        arguments = json.dumps(tool_input(call.arguments), ensure_ascii=False)
        json_delta = {"type": "input_json_delta", "partial_json": arguments}
        delta = _event("content_block_delta", index=self._index, delta=json_delta)
        return [*self._open(block), delta, *self._close()]

    def _block(self, block: dict[str, Any]) -> list[bytes]:
        kind = block.get("type")
        if kind == "thinking":
            events = self._open({"type": "thinking", "thinking": "", "signature": ""})
            for delta in (
                {"type": "thinking_delta", "thinking": block.get("thinking", "")},
                {"type": "signature_delta", "signature": block.get("signature", "")},
            ):
                events.append(_event("content_block_delta", index=self._index, delta=delta))
            return events + self._close()
        if "input" in block:  # server tool use: its input as a JSON delta
            events = self._open({**block, "input": {}})
            json_delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events.append(_event("content_block_delta", index=self._index, delta=json_delta))
            return events + self._close()
        return self._open(block) + self._close()

    def _open(self, block: dict[str, Any]) -> list[bytes]:
        return [_event("content_block_start", index=self._index, content_block=block)]

    def _close(self) -> list[bytes]:
        event = _event("content_block_stop", index=self._index)
        self._index += 1
        return [event]

    def _close_text(self) -> list[bytes]:
        if not self._text_open:
            return []
        self._text_open = False
        return self._close()


def _event(kind: str, **data: Any) -> bytes:
    return sse({"type": kind, **data}, kind)
