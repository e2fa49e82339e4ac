"""A small real HTTP server that answers chat requests with whatever bytes a test scripts: the
hostile or broken upstream replies the proxy must turn into clear errors (never a mock)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True, slots=True)
class Raw:
    """One reply: status, content type, and the body in pieces (written and flushed one by
    one). ``length`` False sends no Content-Length: the body ends when the server closes."""

    body: list[bytes]
    status: int = 200
    content_type: str = "application/json"
    length: bool = True
    headers: dict[str, str] = field(default_factory=dict)


def events(*chunks: dict[str, Any] | str) -> Raw:
    """An event stream of ``chunks`` (``"[DONE]"`` as given), ended by closing."""
    data = [f"data: {c if isinstance(c, str) else json.dumps(c)}\n\n".encode() for c in chunks]
    return Raw(data, content_type="text/event-stream", length=False)


def completion(message: dict[str, Any], **extra: Any) -> Raw:
    """A whole ``chat.completion`` holding ``message`` (``extra`` replaces top-level keys)."""
    body = {
        "id": "chatcmpl-hostile",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
        **extra,
    }
    return Raw([json.dumps(body).encode()])


@dataclass
class HostileServer:
    """Answers ``POST .../chat/completions`` with ``reply(body)``; records every body."""

    reply: Callable[[dict[str, Any]], Raw]
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _handler(server: HostileServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            server.requests.append(body)
            raw = server.reply(body)
            self.send_response(raw.status)
            self.send_header("Content-Type", raw.content_type)
            for name, value in raw.headers.items():
                self.send_header(name, value)
            if raw.length:
                self.send_header("Content-Length", str(sum(map(len, raw.body))))
            else:
                self.send_header("Connection", "close")
            self.end_headers()
            for piece in raw.body:
                self.wfile.write(piece)
                self.wfile.flush()
            self.close_connection = not raw.length

    return Handler


def named(*pairs: tuple[str, dict[str, Any] | str]) -> Raw:
    """An event stream of named events (Anthropic's and Responses'), each ``(name, data)``;
    data given as text goes as it is (JSON that ``json.dumps`` would not write)."""
    body = []
    for name, data in pairs:
        text = data if isinstance(data, str) else json.dumps(data)
        body.append(f"event: {name}\ndata: {text}\n\n".encode())
    return Raw(body, content_type="text/event-stream", length=False)


def whole(data: dict[str, Any] | str, status: int = 200, **headers: str) -> Raw:
    """A whole JSON reply (text goes as it is), with ``headers`` (``retry_after``:
    ``retry-after``)."""
    text = data if isinstance(data, str) else json.dumps(data)
    sent = {k.replace("_", "-"): v for k, v in headers.items()}
    return Raw([text.encode()], status=status, headers=sent)
