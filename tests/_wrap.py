"""``contextfold wrap`` run as a user runs it, in a fresh interpreter with this checkout's
sources, sealed off and offline like the CLIs of :mod:`tests._clis` (the CLI found on PATH,
as a user's would be): :func:`wrap_argv`, :func:`wrap_env`, and what a finished run must have
left behind (:func:`proxy_port`, :func:`port_closed`, :func:`processes_in`)."""

from __future__ import annotations

import os
import re
import socket
import sys
from pathlib import Path

from tests._clis import ROOT, cli

__all__ = ["port_closed", "processes_in", "proxy_port", "wrap_argv", "wrap_env"]

_MAIN = "import sys; from contextfold.cli import app; sys.argv[0] = 'contextfold'; app()"


def wrap_argv(*args: str) -> list[str]:
    """``contextfold wrap ARGS...`` in this interpreter."""
    return [sys.executable, "-c", _MAIN, "wrap", *args]


def wrap_env(env: dict[str, str], *clis: str) -> dict[str, str]:
    """``env`` with the CLIs' folder first on PATH and this checkout's sources importable."""
    folders = {str(Path(cli(name)).parent) for name in clis}
    path = os.pathsep.join([*sorted(folders), env["PATH"]])
    return env | {"PATH": path, "PYTHONPATH": str(ROOT / "src"), "PYTHONUNBUFFERED": "1"}


def proxy_port(stderr: str) -> int:
    """The port of the proxy wrap started, from its opening line."""
    found = re.search(r"through http://127\.0\.0\.1:(\d+)", stderr)
    assert found, stderr
    return int(found[1])


def port_closed(port: int) -> bool:
    """Whether nothing listens on ``port`` of 127.0.0.1 any more."""
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def processes_in(folder: Path) -> list[int]:
    """The processes whose working directory is ``folder`` or under it (a CLI, or anything it
    started, left running)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = Path(os.readlink(entry / "cwd"))
        except OSError:
            continue
        if cwd == folder or folder in cwd.parents:
            found.append(int(entry.name))
    return found
