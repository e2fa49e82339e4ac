"""Running the proxy in a background thread (tests, benchmarks, embedding in a program)."""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType
from typing import Any, Self

import uvicorn

from contextfold.serve.app import create_app
from contextfold.serve.build import build_proxy
from contextfold.serve.config import ServeConfig
from contextfold.serve.sessions.proxy import Proxy

__all__ = ["ProxyThread", "ServerThread", "listening_socket"]


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` with TCP_NODELAY, which accepted connections inherit:
    uvicorn writes a response's head and body separately, and with Nagle's algorithm the body
    would wait for the client's delayed ACK (about 40 ms a request)."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(address)
    return sock


class ServerThread:
    """``with ServerThread(app, host, port) as t:`` serves an ASGI app with uvicorn in a
    background thread until the block ends; the port is chosen by the system when it is 0."""

    what = "the server"

    def __init__(
        self, app: Any, *, host: str, port: int = 0, start_timeout: float = 30.0, **uv: Any
    ) -> None:
        self._socket = listening_socket(host, port)
        self.host = host
        self.port = int(self._socket.getsockname()[1])
        settings = uvicorn.Config(app, log_level="warning", access_log=False, **uv)
        self._server = uvicorn.Server(settings)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )
        self._start_timeout = start_timeout

    def __enter__(self) -> Self:
        self._thread.start()
        deadline = time.monotonic() + self._start_timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"{self.what} did not start on {self.host}:{self.port}")
            time.sleep(0.01)
        return self

    def wait(self) -> None:
        """Serve until interrupted (Ctrl-C)."""
        while self._thread.is_alive():
            self._thread.join(0.5)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=30)
        self._socket.close()


class ProxyThread(ServerThread):
    """``with ProxyThread(config) as p:`` serves on ``p.url`` (``http://127.0.0.1:PORT/v1``)
    until the block ends; the port is chosen by the system unless given."""

    what = "the proxy"

    def __init__(self, config: ServeConfig, *, port: int = 0, start_timeout: float = 30.0) -> None:
        self.proxy: Proxy = build_proxy(config)
        app = create_app(self.proxy)
        super().__init__(
            app, host=config.host, port=port, start_timeout=start_timeout, lifespan="on"
        )
        self.url = f"http://{config.host}:{self.port}/v1"

    def __enter__(self) -> Self:
        self.proxy.open()  # a store that cannot be served raises here, before the server starts
        return super().__enter__()
