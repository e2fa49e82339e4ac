"""A scripted OpenAI-compatible server with a prefix cache, for offline tests.

Never a mock: :class:`ScriptedServer` is a real HTTP server a real client talks to, with
replies from a function of the request and cached tokens reported as vLLM reports them, so the
proxy's cost is measured against a cache that behaves like one.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from contextfold.core.tokens import CHARS_PER_TOKEN, approx_tokens
from contextfold.testing.upstreams._cache import Bill, CacheUsage

__all__ = ["ScriptedServer", "echo_reply", "render_prompt"]

ReplyFn = Callable[[dict[str, Any]], dict[str, Any]]
"""The assistant message (an OpenAI dict) answering one request body."""

BLOCK_TOKENS = 16


def echo_reply(body: dict[str, Any]) -> dict[str, Any]:
    """Answers ``ok: <the last message's first 40 characters>``."""
    last = body["messages"][-1].get("content") or ""
    return {"role": "assistant", "content": f"ok: {str(last)[:40]}"}


def render_prompt(body: dict[str, Any]) -> str:
    """The prompt text a chat template would make of a request (tools first)."""
    parts = [json.dumps(body.get("tools") or [], sort_keys=True)]
    for m in body["messages"]:
        parts.append(f"<|im_start|>{m['role']}\n{json.dumps(m, sort_keys=True)}<|im_end|>\n")
    return "".join(parts)


class ScriptedServer:
    """A threaded HTTP server; use as a context manager (starts and stops it).

    It answers ``/v1/chat/completions`` (streamed or not) and ``/v1/models`` on the loopback
    address, with replies from a function of the request. Its prefix cache works like vLLM's
    automatic prefix caching (:meth:`usage`): the prompt is rendered with a ChatML-like template,
    cut into tokens of 4 characters and blocks of 16 tokens; a block is served from the cache
    when its whole prefix was seen before. ``usage.prompt_tokens_details.cached_tokens`` reports
    that, as vLLM does. It records every request (headers lower-cased, body) in
    :attr:`requests`.
    """

    def __init__(self, reply: ReplyFn = echo_reply, *, chunk_delay: float = 0.0) -> None:
        self.reply = reply
        self.chunk_delay = chunk_delay
        """Seconds between streamed chunks."""
        self.fail: tuple[int, str] | None = None
        """When set, every chat request is answered with this status and message."""
        self.requests: list[tuple[dict[str, str], dict[str, Any]]] = []
        self.bills: list[Bill] = []
        """What each answered chat call was billed for, in order (its reported usage)."""
        self._blocks: set[str] = set()
        self._lock = threading.Lock()
        self.httpd = _Server(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def usage(self, body: dict[str, Any], completion: dict[str, Any]) -> dict[str, Any]:
        """Token usage of one call, its cached prefix looked up (and then added) in the cache."""
        text = render_prompt(body)
        prompt = approx_tokens(len(text))
        block_chars = BLOCK_TOKENS * CHARS_PER_TOKEN
        digest, cached, hit = hashlib.blake2b(digest_size=16), 0, True
        with self._lock:
            for start in range(0, len(text) - block_chars + 1, block_chars):
                digest.update(text[start : start + block_chars].encode())
                key = digest.hexdigest()
                hit = hit and key in self._blocks
                cached += BLOCK_TOKENS if hit else 0
                self._blocks.add(key)
        out = approx_tokens(len(json.dumps(completion)))
        self.bills.append(Bill(CacheUsage(read=cached, written=0, uncached=prompt - cached), out))
        return {
            "prompt_tokens": prompt,
            "completion_tokens": out,
            "total_tokens": prompt + out,
            "prompt_tokens_details": {"cached_tokens": cached},
        }


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default 5 resets connections when many arrive at once


def _handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()  # headers and body go in two writes: without this, Nagle's
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # 40 ms

        def do_GET(self) -> None:
            self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            server.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
            if server.fail is not None:
                status, text = server.fail
                self._json(status, {"error": {"message": text, "type": "server_error"}})
                return
            message = server.reply(body)
            usage = server.usage(body, message)
            if body.get("stream"):
                self._stream(body, message, usage)
                return
            finish = "tool_calls" if message.get("tool_calls") else "stop"
            choice = {"index": 0, "message": message, "finish_reason": finish}
            self._json(200, {**_head(body, "chat.completion"), "choices": [choice], "usage": usage})

        def _stream(self, body: dict[str, Any], message: dict[str, Any], usage: Any) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            head = _head(body, "chat.completion.chunk")
            for delta in _deltas(message):
                self._event({**head, "choices": [{"index": 0, "delta": delta}]})
                time.sleep(server.chunk_delay)
            finish = "tool_calls" if message.get("tool_calls") else "stop"
            end = {"index": 0, "delta": {}, "finish_reason": finish}
            self._event({**head, "choices": [end]})
            self._event({**head, "choices": [], "usage": usage})
            self.wfile.write(b"data: [DONE]\n\n")
            self.close_connection = True

        def _event(self, data: dict[str, Any]) -> None:
            self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

        def _json(self, status: int, data: dict[str, Any]) -> None:
            raw = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


def _head(body: dict[str, Any], kind: str) -> dict[str, Any]:
    return {"id": "chatcmpl-scripted", "object": kind, "created": 0, "model": body["model"]}


def _deltas(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The message as stream deltas: its text in pieces of 8 characters, then each tool call
    (name first, then its arguments in two pieces)."""
    text = message.get("content") or ""
    out: list[dict[str, Any]] = [{"role": "assistant"}]
    out += [{"content": text[i : i + 8]} for i in range(0, len(text), 8)]
    for i, call in enumerate(message.get("tool_calls") or []):
        fn, half = call["function"], len(call["function"]["arguments"]) // 2
        first = {"index": i, "id": call["id"], "type": "function", "function": {"name": fn["name"]}}
        out.append({"tool_calls": [{**first, "function": {**first["function"], "arguments": ""}}]})
        for piece in (fn["arguments"][:half], fn["arguments"][half:]):
            out.append({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
    return out
