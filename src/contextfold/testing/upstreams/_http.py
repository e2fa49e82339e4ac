"""The HTTP server under the scripted Anthropic, Responses and Gemini upstreams.

:class:`ScriptedHTTP` is a threaded server on the loopback address that records every request
(:class:`Received`) and answers each with what its subclass's :meth:`ScriptedHTTP.answer`
returns: a JSON body, a stream of server-sent events (``event:`` and ``data:`` lines, as
Anthropic and OpenAI send them), or a body streamed in pieces as given (Gemini's ``data:``-only
events and its JSON-array stream). :class:`Script` turns a list of replies or a reply function
into the next reply, the way :class:`~contextfold.models.ScriptedModel` does.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, TypeVar
from urllib.parse import urlsplit

from contextfold.core.tokens import CHARS_PER_TOKEN, approx_tokens

__all__ = [
    "CHARS_PER_TOKEN",
    "Answer",
    "Received",
    "Script",
    "ScriptEnded",
    "ScriptedHTTP",
    "tokens",
]

R = TypeVar("R")


def tokens(text: str) -> int:
    """Tokens of ``text`` as the scripted upstreams count them (the approximation's rule,
    :func:`~contextfold.core.tokens.approx_tokens`: 4 characters each)."""
    return approx_tokens(len(text))


@dataclass(frozen=True, slots=True)
class Received:
    """One request as the upstream received it."""

    method: str
    path: str
    """The path without its query (``/v1/messages``)."""
    query: str
    headers: dict[str, str]
    """Lower-cased names."""
    body: Any
    """The parsed JSON body (None for a request without one or one that is not JSON)."""


@dataclass(slots=True)
class Answer:
    """A JSON reply (``body``), a server-sent event stream (``events``: name and data), or a
    body streamed as the given pieces (``chunks``; its ``Content-Type`` in ``headers``)."""

    status: int = 200
    body: dict[str, Any] | None = None
    events: Iterable[tuple[str, dict[str, Any]]] | None = None
    chunks: Iterable[bytes] | None = None
    headers: dict[str, str] = field(default_factory=dict)


class ScriptEnded(Exception):
    """A listed script has no reply left."""


class Script(Generic[R]):
    """The replies of a scripted upstream: a list used in order, or a function of the body."""

    def __init__(self, replies: Iterable[R] | Callable[[dict[str, Any]], R]) -> None:
        self._function = replies if callable(replies) else None
        self._replies: list[R] = [] if callable(replies) else list(replies)
        self._used = 0
        self._lock = threading.Lock()

    def next(self, body: dict[str, Any]) -> R:
        """The reply to ``body``; running out of listed replies raises :class:`ScriptEnded`."""
        if self._function is not None:
            return self._function(body)
        with self._lock:
            if self._used >= len(self._replies):
                raise ScriptEnded(f"the script has no reply left ({len(self._replies)} used)")
            self._used += 1
            return self._replies[self._used - 1]


class ScriptedHTTP:
    """A threaded HTTP server on 127.0.0.1 (``port`` 0: one the system picks); use as a
    context manager (starts and stops it)."""

    def __init__(self, *, chunk_delay: float = 0.0, port: int = 0) -> None:
        self.chunk_delay = chunk_delay
        """Seconds between streamed events."""
        self.requests: list[Received] = []
        """Every request received, in order."""
        self.lock = threading.Lock()
        self.httpd = _Server(("127.0.0.1", port), _handler(self))
        self.httpd.daemon_threads = True
        self.root = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self) -> ScriptedHTTP:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def answer(self, received: Received) -> Answer:
        """The reply to one request (subclasses answer their protocol's routes)."""
        raise NotImplementedError

    def refuse(self, status: int, message: str) -> Answer:
        """An error reply in the protocol's shape (a body that is not JSON, a crash)."""
        raise NotImplementedError


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default 5 resets connections when many arrive at once


def _handler(server: ScriptedHTTP) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()  # headers and body go in two writes: without this, Nagle's
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # 40 ms

        def do_GET(self) -> None:
            self._serve(None)

        def do_DELETE(self) -> None:
            self._serve(None)

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                self._serve(json.loads(raw) if raw else None)
            except json.JSONDecodeError:
                self._send(server.refuse(400, "The request body is not valid JSON."))

        def _serve(self, body: Any) -> None:
            url = urlsplit(self.path)
            headers = {k.lower(): v for k, v in self.headers.items()}
            received = Received(self.command, url.path, url.query, headers, body)
            with server.lock:
                server.requests.append(received)
            try:
                answer = server.answer(received)
            except Exception as e:  # a reply function's bug: a 500 the client can read
                answer = server.refuse(500, f"scripted upstream failed: {type(e).__name__}: {e}")
            self._send(answer)

        def _send(self, answer: Answer) -> None:
            if answer.events is not None:
                self._stream(answer)
                return
            if answer.chunks is not None:
                self._pieces(answer)
                return
            raw = json.dumps(answer.body).encode()
            self.send_response(answer.status)
            for name, value in {"Content-Type": "application/json", **answer.headers}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def _stream(self, answer: Answer) -> None:
            self.send_response(answer.status)
            for name, value in {"Content-Type": "text/event-stream", **answer.headers}.items():
                self.send_header(name, value)
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                for name, data in answer.events or ():
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                    self.wfile.flush()
                    time.sleep(server.chunk_delay)
            except ConnectionError:  # the client went away mid-stream
                pass
            self.close_connection = True

        def _pieces(self, answer: Answer) -> None:
            self.send_response(answer.status)
            for name, value in answer.headers.items():
                self.send_header(name, value)
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                for piece in answer.chunks or ():
                    self.wfile.write(piece)
                    self.wfile.flush()
                    time.sleep(server.chunk_delay)
            except ConnectionError:  # the client went away mid-stream
                pass
            self.close_connection = True

        def log_message(self, *args: Any) -> None:
            pass

    return Handler
