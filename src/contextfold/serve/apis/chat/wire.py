"""A Chat Completions upstream (vLLM, SGLang, llama.cpp server, OpenAI; the embedded model):
the view written as its body, its replies (whole or streamed) read back.

Requests of every API can go to such an upstream: a Chat Completions request's own options go as
they came; the others' are translated (:mod:`~contextfold.serve.apis.chat.translate`). Streamed text
and reasoning are passed on as they arrive; tool-call deltas are put back together and read at the
end."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from contextfold.core.errors import MessageFormatError
from contextfold.core.messages import AssistantMessage, from_openai
from contextfold.serve.apis.chat._replies import (
    check_chunk,
    check_message,
    reply_message,
    usage_numbers,
)
from contextfold.serve.apis.chat._stops import from_chat as from_chat_stop
from contextfold.serve.apis.chat.translate import chat_base, chat_messages, chat_tools, from_chat
from contextfold.serve.errors import UpstreamError
from contextfold.serve.exchange import Call, Delta, HeaderFamily, Reply

__all__ = ["OPENAI_HEADERS", "ChatReader", "ChatWire", "bearer"]

OPENAI_HEADERS = HeaderFamily(
    "openai", ("openai-beta", "openai-organization", "openai-project"), lists=("openai-beta",)
)
"""OpenAI's headers (its Chat Completions and Responses APIs share them)."""


class ChatWire:
    """The Chat Completions API as an upstream's."""

    api = "chat"
    family = OPENAI_HEADERS
    done = "[DONE]"

    def path(self, call: Call) -> str:
        return "/chat/completions"

    def body(self, call: Call) -> dict[str, Any]:
        body = chat_base(call.request)
        body["messages"] = chat_messages(call.messages, call.request)
        tools = [*chat_tools(call.request), *call.own_tools]
        if tools:
            body["tools"] = tools
        body["stream"] = call.stream
        if call.stream:
            body["stream_options"] = {"include_usage": True}
        return body

    def reply(self, data: dict[str, Any], call: Call, where: str) -> Reply:
        message = from_chat(_message(reply_message(data, where), where), call.request)
        usage = usage_numbers(data.get("usage"), where)
        return Reply(message, usage, from_chat_stop(data["choices"][0].get("finish_reason")), data)

    def reader(self, call: Call, where: str) -> ChatReader:
        return ChatReader(where, call)

    def headers(self, given: dict[str, str], key: str | None) -> dict[str, str]:
        return bearer(given, key)


def bearer(given: dict[str, str], key: str | None) -> dict[str, str]:
    """``given``, with ``Authorization: Bearer key`` when it has no credentials."""
    if key and not any(k.lower() in ("authorization", "x-api-key") for k in given):
        return {**given, "Authorization": f"Bearer {key}"}
    return given


def _message(message: dict[str, Any], where: str) -> AssistantMessage:
    try:
        parsed = from_openai(message)
    except MessageFormatError as exc:
        raise UpstreamError(502, f"upstream {where} answered a message it cannot: {exc}") from exc
    assert isinstance(parsed, AssistantMessage)
    return parsed


@dataclass(slots=True)
class _Call:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ChatReader:
    """One streamed Chat Completions reply from the upstream named ``where``, put back
    together; each chunk checked as it comes (a malformed one is an UpstreamError)."""

    where: str
    call: Call
    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, _Call] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None

    def add(self, event: str, chunk: dict[str, Any]) -> list[Delta]:
        check_chunk(chunk, self.where)
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        out: list[Delta] = []
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            self.finish_reason = choice.get("finish_reason") or self.finish_reason
            delta = choice.get("delta") or {}
            text = delta.get("content")
            if isinstance(text, str) and text:
                self.content.append(text)
                out.append(("text", text))
            reasoning = delta.get("reasoning_content", delta.get("reasoning"))
            if isinstance(reasoning, str) and reasoning:
                self.reasoning.append(reasoning)
                out.append(("reasoning", reasoning))
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

    def reply(self) -> Reply:
        """The round's reply (a 502 when the stream ended without a finish_reason, or left a
        tool call without a name)."""
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
        message = _message(check_message(out, self.where, "streamed message"), self.where)
        message = from_chat(message, self.call.request)
        usage = usage_numbers(self.usage, self.where)
        return Reply(message, usage, from_chat_stop(self.finish_reason))
