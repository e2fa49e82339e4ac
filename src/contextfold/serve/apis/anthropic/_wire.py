"""An Anthropic Messages upstream: the view written as a Messages body, with the client's
options, tools and headers as it sent them and the cache breakpoints placed
(:mod:`._cache`); replies, whole or streamed in Anthropic's event sequence, read back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contextfold.serve.apis.anthropic._cache import place_breakpoints
from contextfold.serve.apis.anthropic._read import read_assistant
from contextfold.serve.apis.anthropic._request import AnthropicRequest
from contextfold.serve.apis.anthropic._shapes import check_event, check_message
from contextfold.serve.apis.anthropic._stops import from_anthropic
from contextfold.serve.apis.anthropic._write import write_view
from contextfold.serve.edge.body import NotPortable, strict_json
from contextfold.serve.errors import ApiError, UpstreamError
from contextfold.serve.exchange import Call, ClientRequest, Delta, HeaderFamily, Reply

__all__ = [
    "ANTHROPIC_HEADERS",
    "ANTHROPIC_VERSION",
    "AnthropicReader",
    "AnthropicWire",
    "read_usage",
]

ANTHROPIC_VERSION = "2023-06-01"
"""The ``anthropic-version`` sent when the client sends none."""
ANTHROPIC_HEADERS = HeaderFamily(
    "anthropic", ("anthropic-version", "anthropic-beta"), lists=("anthropic-beta",), key="x-api-key"
)
"""Anthropic's headers, and its clients' own key (``x-api-key``)."""
_OWN = ("messages", "system", "stream", "tools")


def read_usage(usage: Any) -> dict[str, int]:
    """Anthropic's usage (uncached input, cache reads and writes, output) as a call's; the
    writes' ``cache_creation`` split gives those written for an hour."""
    usage = usage if isinstance(usage, dict) else {}
    split = usage.get("cache_creation")
    split = split if isinstance(split, dict) else {}
    counts = {k: usage.get(k) or 0 for k in _USAGE}
    counts["hour"] = split.get("ephemeral_1h_input_tokens") or 0
    if not all(isinstance(v, int) and v >= 0 for v in counts.values()):
        raise UpstreamError(502, f"upstream usage is not a count of tokens: {usage!r:.200}")
    read, written = counts["cache_read_input_tokens"], counts["cache_creation_input_tokens"]
    return {
        "prompt_tokens": counts["input_tokens"] + read + written,
        "cached_tokens": read,
        "cache_write_tokens": written,
        "cache_write_1h_tokens": min(counts["hour"], written),
        "completion_tokens": counts["output_tokens"],
    }


_USAGE = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")


class AnthropicWire:
    """The Anthropic Messages API as an upstream's (for Messages requests, and those of an
    API whose requests go to every upstream, translated: :func:`_translated`)."""

    api = "anthropic"
    family = ANTHROPIC_HEADERS
    done = None

    def path(self, call: Call) -> str:
        return "/messages"

    def body(self, call: Call) -> dict[str, Any]:
        request = call.request
        written = write_view(call.messages)
        if isinstance(request, AnthropicRequest):
            body = {k: v for k, v in request.body.items() if k not in _OWN}
            given = list(request.tools)
            settled = (call.settled, call.cached_through)
            place_breakpoints(written, call.messages, call.provenance, settled, request.marks)
        else:  # another API's request (no cache marks), by way of Chat Completions' options
            body, given = _translated(request)
        if written.system is not None:
            body["system"] = written.system
        body["messages"] = written.messages
        tools = [*given, *(_tool(t) for t in call.own_tools)]
        if tools:
            body["tools"] = tools
        if call.stream:
            body["stream"] = True
        return body

    def reply(self, data: dict[str, Any], call: Call, where: str) -> Reply:
        check_message(data, where)
        message = _assistant(data.get("content"), where)
        stop = from_anthropic(data.get("stop_reason"))
        return Reply(message, read_usage(data.get("usage")), stop, data)

    def reader(self, call: Call, where: str) -> AnthropicReader:
        return AnthropicReader(where)

    def headers(self, given: dict[str, str], key: str | None) -> dict[str, str]:
        out = dict(given)
        if key and not any(k.lower() in ("authorization", "x-api-key") for k in out):
            out["x-api-key"] = key
        out.setdefault("anthropic-version", ANTHROPIC_VERSION)
        return out


DEFAULT_MAX_TOKENS = 8192
"""``max_tokens`` for a request of another API that sets no limit (Messages needs one)."""


def _translated(request: ClientRequest) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The options and tools of another API's request as a Messages body's."""
    from contextfold.serve.apis.chat.translate import chat_base, chat_tools

    chat = chat_base(request)
    body: dict[str, Any] = {"model": chat["model"]}
    body["max_tokens"] = chat.get("max_tokens") or DEFAULT_MAX_TOKENS
    for key in ("temperature", "top_p"):
        if chat.get(key) is not None:
            body[key] = chat[key]
    stop = chat.get("stop")
    if stop:
        body["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    choice = chat.get("tool_choice")
    if isinstance(choice, dict):
        body["tool_choice"] = {"type": "tool", "name": choice["function"]["name"]}
    elif choice is not None:
        body["tool_choice"] = {"type": {"required": "any"}.get(choice, choice)}
    return body, [_tool(t) for t in chat_tools(request)]


def _tool(schema: dict[str, Any]) -> dict[str, Any]:
    fn = schema["function"]
    tool = {"name": fn["name"], "input_schema": fn.get("parameters") or {"type": "object"}}
    return {**tool, "description": fn["description"]} if fn.get("description") else tool


def _assistant(content: Any, where: str) -> Any:
    try:
        return read_assistant(content, "content")
    except ApiError as exc:
        raise UpstreamError(502, f"upstream {where} answered a reply whose {exc.message}") from exc


@dataclass(slots=True)
class AnthropicReader:
    """One streamed Messages reply, put back together from its events (each checked first:
    :mod:`._shapes`)."""

    where: str
    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    partial: dict[int, list[str]] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)
    stop: str | None = None
    message: dict[str, Any] = field(default_factory=dict)
    done: bool = False

    def add(self, event: str, data: dict[str, Any]) -> list[Delta]:
        kind = data.get("type", event)
        check_event(str(kind), data, self.where)
        if kind == "message_start":
            self.message = dict(data.get("message") or {})
            self.usage.update(self.message.get("usage") or {})
        elif kind == "content_block_start":
            self.blocks[self._index(data)] = dict(data.get("content_block") or {})
        elif kind == "content_block_delta":
            return self._delta(self._index(data), data.get("delta") or {})
        elif kind == "content_block_stop":
            return self._stop(self._index(data))
        elif kind == "message_delta":
            self.stop = (data.get("delta") or {}).get("stop_reason") or self.stop
            self.usage.update({k: v for k, v in (data.get("usage") or {}).items() if v is not None})
        elif kind == "message_stop":
            self.done = True
        return []

    def _index(self, data: dict[str, Any]) -> int:
        index = data.get("index")
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < 1024:
            raise UpstreamError(502, f"upstream {self.where} streamed a block index {index!r}")
        return index

    def _delta(self, index: int, delta: dict[str, Any]) -> list[Delta]:
        block = self.blocks.setdefault(index, {"type": "text", "text": ""})
        kind = delta.get("type")
        if kind == "text_delta":
            text = str(delta.get("text", ""))
            block["text"] = block.get("text", "") + text
            return [("text", text)] if text else []
        if kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + str(delta.get("thinking", ""))
        elif kind == "signature_delta":
            block["signature"] = str(delta.get("signature", ""))
        elif kind == "input_json_delta":
            self.partial.setdefault(index, []).append(str(delta.get("partial_json", "")))
        elif kind == "citations_delta":
            block.setdefault("citations", []).append(delta.get("citation"))
        return []

    def _stop(self, index: int) -> list[Delta]:
        block = self.blocks.get(index, {})
        if index in self.partial:
            raw = "".join(self.partial.pop(index)) or "{}"
            try:
                block["input"] = strict_json(raw)
            except NotPortable as exc:
                raise UpstreamError(
                    502,
                    f"upstream {self.where} streamed a tool input that is not JSON: {raw[:200]!r}",
                ) from exc
        if block.get("type") == "text":
            return [("break", None)]
        if block.get("type") == "tool_use":
            return [("call", None)]
        return [("block", block)]

    def reply(self) -> Reply:
        if not self.done:
            raise UpstreamError(502, f"upstream {self.where} ended its stream before message_stop")
        content = [self.blocks[i] for i in sorted(self.blocks)]
        message = _assistant(content, self.where)
        raw = {**self.message, "content": content, "stop_reason": self.stop, "usage": self.usage}
        return Reply(message, read_usage(self.usage), from_anthropic(self.stop), raw)
