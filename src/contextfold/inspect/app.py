"""The inspector's web app (Starlette), its server thread, and the static export.

Routes: ``/`` the page, ``/app.js`` and ``/style.css`` its code, ``/data.js`` (empty when
served: the page then fetches), ``/data/index.json`` the sessions, ``/data/session-N.json``
one session. The export writes the same files, with every session embedded in ``data.js`` so
the page also opens from ``file://``.
"""

from __future__ import annotations

import json
import threading
import time
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from contextfold.core.errors import ContextFoldError
from contextfold.inspect.sources import Catalog
from contextfold.serve.runner import listening_socket

__all__ = ["ASSETS", "InspectServer", "create_app", "export_site"]

ASSETS = {
    "index.html": "text/html",
    "app.js": "text/javascript",
    "plots.js": "text/javascript",
    "style.css": "text/css",
}


def asset(name: str) -> str:
    return (resources.files("contextfold.inspect") / "static" / name).read_text("utf-8")


def create_app(catalog: Catalog) -> Starlette:
    def static(request: Request) -> Response:
        name = request.url.path.lstrip("/") or "index.html"
        return Response(asset(name), media_type=ASSETS[name])

    def data_js(_: Request) -> Response:
        return Response("window.CF_EXPORT = null;\n", media_type="text/javascript")

    def index(_: Request) -> Response:
        return JSONResponse(catalog.index())

    def session(request: Request) -> Response:
        n = int(request.path_params["n"])
        if not 0 <= n < len(catalog.entries):
            return JSONResponse({"error": f"no session {n}"}, status_code=404)
        try:
            data = catalog.entries[n].data()
        except ContextFoldError as exc:
            return JSONResponse({"error": str(exc)}, status_code=500)
        return Response(_dumps(data), media_type="application/json")

    routes = [Route(f"/{name}", static) for name in ASSETS if name != "index.html"]
    routes += [
        Route("/", static),
        Route("/data.js", data_js),
        Route("/data/index.json", index),
        Route("/data/session-{n:int}.json", session),
    ]
    return Starlette(routes=routes)


def _dumps(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def export_site(catalog: Catalog, out: Path) -> list[Path]:
    """Write the page and every session's JSON under ``out``; returns the files written."""
    (out / "data").mkdir(parents=True, exist_ok=True)
    written = []
    for name in ASSETS:
        (out / name).write_text(asset(name), encoding="utf-8")
        written.append(out / name)
    sessions = {str(i): e.data() for i, e in enumerate(catalog.entries)}
    bundle = {"index": catalog.index(), "sessions": sessions}
    (out / "data.js").write_text(f"window.CF_EXPORT = {_dumps(bundle)};\n", encoding="utf-8")
    (out / "data" / "index.json").write_text(_dumps(catalog.index()), encoding="utf-8")
    written += [out / "data.js", out / "data" / "index.json"]
    for key, data in sessions.items():
        path = out / "data" / f"session-{key}.json"
        path.write_text(_dumps(data), encoding="utf-8")
        written.append(path)
    return written


class InspectServer:
    """``with InspectServer(catalog) as s:`` serves the page on ``s.url`` (loopback) until
    the block ends; the port is chosen by the system unless given."""

    def __init__(self, catalog: Catalog, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self._socket = listening_socket(host, port)
        self.port = int(self._socket.getsockname()[1])
        self.url = f"http://{host}:{self.port}/"
        settings = uvicorn.Config(create_app(catalog), log_level="warning", access_log=False)
        self._server = uvicorn.Server(settings)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )

    def __enter__(self) -> InspectServer:
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the inspector did not start on {self.url}")
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
