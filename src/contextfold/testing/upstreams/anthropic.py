"""A scripted Anthropic Messages server with Anthropic's prompt caching, for offline tests.

A real HTTP server the anthropic SDK and Claude Code talk to (:class:`ScriptedAnthropic`): it
refuses what the real API refuses and reports cache reads and writes as it does, so a proxy
that rewrites a conversation wrongly, or breaks its cache, fails a test.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from contextfold.testing.upstreams._anthropic_checks import check_body, sign
from contextfold.testing.upstreams._cache import Bill, BreakpointCache, CacheUsage
from contextfold.testing.upstreams._http import (
    Answer,
    Received,
    Script,
    ScriptedHTTP,
    ScriptEnded,
    tokens,
)
from contextfold.testing.upstreams._prompt import (
    anthropic_block_text,
    anthropic_blocks,
    generated_tokens,
)

__all__ = ["AnthropicReply", "ScriptedAnthropic", "echo", "text", "thinking", "tool_use"]

AnthropicReply = str | list[dict[str, Any]]
"""A reply: plain text, or the content blocks of the assistant message (``tool_use`` blocks
without an ``id`` get one; ``thinking`` blocks without a ``signature`` are signed)."""

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
PIECE = 8
"""Characters of text (or of a tool's input JSON) per streamed delta."""


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(name: str, input: dict[str, Any], *, id: str | None = None) -> dict[str, Any]:
    block = {"type": "tool_use", "name": name, "input": input}
    return block if id is None else {**block, "id": id}


def thinking(value: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": sign(value)}


def echo(body: dict[str, Any]) -> AnthropicReply:
    """Answers ``ok: <the last message's first 40 characters>``."""
    content = body["messages"][-1]["content"]
    if not isinstance(content, str):
        content = " ".join(b.get("text", "") for b in content if b.get("type") == "text")
    return f"ok: {content[:40]}"


class ScriptedAnthropic(ScriptedHTTP):
    """An Anthropic-style upstream; :attr:`url` is the SDK's ``base_url`` (no ``/v1``).

    It answers ``POST /v1/messages`` (streamed in Anthropic's event sequence, or not),
    ``POST /v1/messages/count_tokens`` and ``GET /v1/models`` on the loopback address, with
    replies scripted like :class:`~contextfold.models.ScriptedModel`'s (a list used in order, or
    a function of the request body). It checks what the real API checks before it answers
    (``x-api-key`` or a bearer token, ``anthropic-version``, the body:
    :mod:`contextfold.testing.upstreams._anthropic_checks`) and answers errors in Anthropic's shape
    (``{"type": "error", "error": {"type", "message"}, "request_id"}``). Usage reports
    ``input_tokens``, ``cache_read_input_tokens`` and ``cache_creation_input_tokens`` from a
    :class:`~contextfold.testing.upstreams._cache.BreakpointCache`. Thinking blocks it sends are
    signed, and a thinking block sent back with another signature is refused, as the real API
    does.
    """

    def __init__(
        self,
        replies: Iterable[AnthropicReply] | Callable[[dict[str, Any]], AnthropicReply] = echo,
        *,
        api_key: str | None = None,
        min_cache_tokens: int = 1024,
        chunk_delay: float = 0.0,
        port: int = 0,
    ) -> None:
        super().__init__(chunk_delay=chunk_delay, port=port)
        self.script: Script[AnthropicReply] = Script(replies)
        self.api_key = api_key
        """The only key accepted (None: any non-empty key)."""
        self.cache = BreakpointCache(min_tokens=min_cache_tokens)
        self.fail: tuple[int, str] | None = None
        """When set, every messages request is answered with this status and message."""
        self.stream_error: str | None = None
        """When set, a stream stops after its first delta with an ``error`` event of this type."""
        self.bills: list[Bill] = []
        """What each answered messages call was billed for, in order."""
        self.url = self.root
        self._ids = itertools.count(1)

    @property
    def calls(self) -> list[dict[str, Any]]:
        """The bodies of the ``POST /v1/messages`` requests received, in order."""
        return [r.body for r in self.requests if r.path == "/v1/messages" and r.method == "POST"]

    def __enter__(self) -> ScriptedAnthropic:
        super().__enter__()
        return self

    def answer(self, received: Received) -> Answer:
        route = (received.method, received.path)
        if route == ("GET", "/v1/models"):
            return Answer(body=_models())
        if route not in {("POST", "/v1/messages"), ("POST", "/v1/messages/count_tokens")}:
            return self.error(404, f"Not found: {received.method} {received.path}")
        problem = self._refusal(received)
        if problem is not None:
            return problem
        body: dict[str, Any] = received.body
        if received.path.endswith("/count_tokens"):
            return Answer(body={"input_tokens": sum(tokens(t) for t, _ in anthropic_blocks(body))})
        if self.fail is not None:
            return self.error(*self.fail)
        return self._reply(body)

    def refuse(self, status: int, message: str) -> Answer:
        return self.error(status, message)

    def error(self, status: int, message: str) -> Answer:
        """An error in Anthropic's shape."""
        kind = ERROR_TYPES.get(status, "api_error")
        rid = f"req_scripted{next(self._ids)}"
        body = {"type": "error", "error": {"type": kind, "message": message}, "request_id": rid}
        return Answer(status=status, body=body, headers={"request-id": rid})

    def _refusal(self, received: Received) -> Answer | None:
        key = received.headers.get("x-api-key") or _bearer(received.headers)
        if not key:
            return self.error(401, "x-api-key header is required")
        if self.api_key is not None and key != self.api_key:
            return self.error(401, "invalid x-api-key")
        if "anthropic-version" not in received.headers:
            return self.error(400, "anthropic-version: header is required")
        if not isinstance(received.body, dict):
            return self.error(400, "body: Input should be an object")
        betas = frozenset(b.strip() for b in received.headers.get("anthropic-beta", "").split(","))
        count = received.path.endswith("/count_tokens")
        problem = check_body(received.body, count=count, betas=betas)
        return None if problem is None else self.error(400, problem)

    def _reply(self, body: dict[str, Any]) -> Answer:
        try:
            reply = self.script.next(body)
        except ScriptEnded as e:
            return self.error(500, str(e))
        content = self._blocks(reply)
        cached = self.cache.lookup(str(body["model"]), anthropic_blocks(body))
        stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        out = generated_tokens([anthropic_block_text(b) for b in content])
        self.bills.append(Bill(cached, out))
        message = {
            "id": f"msg_scripted{next(self._ids)}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {**_usage(cached), "output_tokens": out},
        }
        headers = {"request-id": f"req_scripted{next(self._ids)}"}
        if body.get("stream"):
            return Answer(events=self._events(message), headers=headers)
        return Answer(body=message, headers=headers)

    def _blocks(self, reply: AnthropicReply) -> list[dict[str, Any]]:
        out = []
        for block in [text(reply)] if isinstance(reply, str) else reply:
            if block["type"] in {"tool_use", "server_tool_use"} and "id" not in block:
                prefix = "toolu" if block["type"] == "tool_use" else "srvtoolu"
                block = {**block, "id": f"{prefix}_scripted{next(self._ids)}"}
            if block["type"] == "thinking" and "signature" not in block:
                block = {**block, "signature": sign(block["thinking"])}
            out.append(block)
        return out

    def _events(self, message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        usage = message["usage"]
        start = {**message, "content": [], "stop_reason": None, "usage": {**usage}}
        start["usage"]["output_tokens"] = 1
        yield "message_start", {"type": "message_start", "message": start}
        yield "ping", {"type": "ping"}
        for index, block in enumerate(message["content"]):
            first, deltas = _block_events(block)
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": first},
            )
            for delta in deltas:
                yield (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
                if self.stream_error is not None:
                    err = {"type": self.stream_error, "message": "Overloaded"}
                    yield "error", {"type": "error", "error": err}
                    return
            yield "content_block_stop", {"type": "content_block_stop", "index": index}
        delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
        yield "message_delta", {"type": "message_delta", "delta": delta, "usage": usage}
        yield "message_stop", {"type": "message_stop"}


def _block_events(block: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A content block's ``content_block_start`` form and its deltas."""
    kind = block["type"]
    if kind == "text":
        return {**block, "text": ""}, [
            {"type": "text_delta", "text": p} for p in _pieces(block["text"])
        ]
    if kind == "thinking":
        deltas = [{"type": "thinking_delta", "thinking": p} for p in _pieces(block["thinking"])]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
        return {**block, "thinking": "", "signature": ""}, deltas
    if kind in {"tool_use", "server_tool_use"}:
        raw = json.dumps(block["input"])
        return {**block, "input": {}}, [
            {"type": "input_json_delta", "partial_json": p} for p in _pieces(raw)
        ]
    return block, []  # redacted thinking, server tool results: whole at the start


def _pieces(value: str) -> list[str]:
    return [value[i : i + PIECE] for i in range(0, len(value), PIECE)] or [""]


def _usage(cached: CacheUsage) -> dict[str, Any]:
    return {
        "input_tokens": cached.uncached,
        "cache_creation_input_tokens": cached.written,
        "cache_read_input_tokens": cached.read,
        "cache_creation": {
            "ephemeral_5m_input_tokens": cached.written - cached.written_1h,
            "ephemeral_1h_input_tokens": cached.written_1h,
        },
        "service_tier": "standard",
    }


def _bearer(headers: dict[str, str]) -> str:
    value = headers.get("authorization", "")
    return value[7:].strip() if value.lower().startswith("bearer ") else ""


def _models() -> dict[str, Any]:
    model = {
        "type": "model",
        "id": "claude-scripted",
        "display_name": "Scripted",
        "created_at": "2025-01-01T00:00:00Z",
    }
    return {"data": [model], "has_more": False, "first_id": model["id"], "last_id": model["id"]}
