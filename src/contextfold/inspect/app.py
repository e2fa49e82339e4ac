"""The inspector's web app (Starlette), its server thread, and the static export.

Routes: ``/`` the page, ``/app.js`` and ``/style.css`` its code, ``/data.js`` (empty when
served: the page then fetches), ``/data/index.json`` the sessions, ``/data/session-N.json``
one session. The export writes the same files, with every session embedded in ``data.js`` so
the page also opens from ``file://``.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from contextfold.core.errors import ContextFoldError
from contextfold.inspect.sources import Catalog
from contextfold.serve.runner import ServerThread

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


class InspectServer(ServerThread):
    """``with InspectServer(catalog) as s:`` serves the page on ``s.url`` (loopback) until
    the block ends; the port is chosen by the system unless given."""

    what = "the inspector"

    def __init__(self, catalog: Catalog, *, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(create_app(catalog), host=host, port=port)
        self.url = f"http://{host}:{self.port}/"
