"""A throwaway PostgreSQL server for tests of a PostgreSQL store (ours, and yours).

initdb into a temporary folder, a free loopback port, trust auth, everything deleted at
:meth:`TempPostgres.stop` (or the end of ``with TempPostgres() as pg:``): the PostgreSQL store's
tests, and ``benchmarks/store_appends.py``, run anywhere Debian's ``postgresql`` package is
installed, with no server to set up.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

__all__ = ["INSTALL", "TempPostgres", "find_bin"]

INSTALL = "apt-get install -y postgresql (as root; `make test` does it)"
SUPERUSER = "contextfold"


def find_bin() -> Path | None:
    """The folder holding initdb and pg_ctl, or None."""
    given = os.environ.get("CONTEXTFOLD_PG_BIN")
    if given:
        return Path(given)
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if versions:
        return versions[-1].parent
    found = shutil.which("initdb")
    return Path(found).parent if found else None


class TempPostgres:
    """One server; :meth:`new_database` gives each test an empty database of its own.

    The binaries come from ``/usr/lib/postgresql/<version>/bin`` (``make setup`` installs the
    package); ``$CONTEXTFOLD_PG_BIN`` or ``PATH`` may name others. PostgreSQL refuses to run as
    root, so as root the server runs as the ``postgres`` OS user (``runuser -u postgres --``, which
    the package creates). A missing server is a :class:`RuntimeError` saying what to install (the
    tests fail with it, never skip).
    """

    def __init__(self) -> None:
        bin_dir = find_bin()
        if bin_dir is None:
            raise RuntimeError(f"PostgreSQL's initdb was not found: {INSTALL}")
        self.bin = bin_dir
        self.root = Path(tempfile.mkdtemp(prefix="contextfold-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self._as: list[str] = []
        self._databases = 0
        if os.geteuid() == 0:
            self._as = ["runuser", "-u", "postgres", "--"]
            shutil.chown(self.root, "postgres", "postgres")
        self.root.chmod(0o755)

    def start(self) -> TempPostgres:
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            SUPERUSER,
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        )
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories='' "
            "-c fsync=on -c max_connections=100"
        )
        log = self.root / "server.log"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(log), "-o", options, "-w", "start")
        self._wait_ready()
        return self

    def __enter__(self) -> TempPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """The URL of a fresh, empty database."""
        import psycopg

        self._databases += 1
        name = f"t{os.getpid()}_{self._databases}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        if self.data.exists():
            subprocess.run(
                [
                    *self._as,
                    str(self.bin / "pg_ctl"),
                    "-D",
                    str(self.data),
                    "-m",
                    "immediate",
                    "-w",
                    "stop",
                ],
                capture_output=True,
                check=False,
            )
        shutil.rmtree(self.root, ignore_errors=True)

    def _run(self, tool: str, *args: str) -> None:
        done = subprocess.run(
            [*self._as, str(self.bin / tool), *args], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            log = self.root / "server.log"
            extra = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{tool} failed:\n{done.stdout}\n{done.stderr}\n{extra}")

    def _wait_ready(self) -> None:
        import psycopg

        deadline = time.monotonic() + 30
        while True:
            try:
                psycopg.connect(self.url(), connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port
