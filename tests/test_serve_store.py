"""contextfold serve and its store file: a store that cannot be served is one line and exit
code 2 before the server starts; one unreadable session is skipped and reported while the
others are served; every store file is owner-only, sidecars included."""

from __future__ import annotations

import os
import socket
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from contextfold.cli import app
from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage, UserMessage, to_openai
from contextfold.core.store import SQLiteStore
from contextfold.strategies.folding.cache import FoldCache
from contextfold.testing.upstreams.chat import ScriptedServer
from tests._serve import TOKEN, canonical, client, metric, serving, stored

SESSIONS, STEPS = 30, 40


def _fill(path: Path) -> None:
    """30 sessions as the proxy writes them (its metadata), 40 steps each."""
    meta = {"serve": {"family": "", "parent": None, "fork_at": None}}
    with SQLiteStore(path, synchronous="NORMAL") as store:
        for n in range(SESSIONS):
            history = History(None, store=store, session_id=f"s{n:02}", meta=meta)
            for k in range(STEPS // 2):
                history.append(UserMessage(f"session {n} asks {k}: " + "x" * 200))
                history.append(AssistantMessage(f"session {n} answers {k}"))


def _conversation(path: Path, session: str) -> list[dict[str, Any]]:
    return stored(path)[session]


@pytest.fixture
def filled(tmp_path: Path) -> Path:
    path = tmp_path / "good.db"
    _fill(path)
    return path


def _corrupt_pages(path: Path) -> None:
    data = bytearray(path.read_bytes())
    for share in (0.4, 0.6, 0.8):
        start = int(len(data) * share) // 4096 * 4096
        data[start : start + 4096] = bytes(4096)
    path.write_bytes(bytes(data))


def _foreign(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE recipes (name TEXT)")


BAD_STORES = {
    "a directory": (lambda p: p.mkdir(), "directory"),
    "a missing directory": (None, "does not exist"),
    "a read-only place": (None, "Permission denied"),
    "random bytes": (lambda p: p.write_bytes(os.urandom(64 * 1024)), "not a database"),
    "a text file": (lambda p: p.write_text("hello\n" * 500), "not a database"),
    "a foreign SQLite database": (_foreign, "not a contextfold store"),
    "a truncated store": (None, "malformed"),
    "a corrupted store": (None, "corrupt"),
}


@pytest.fixture(scope="module")
def taken_port() -> Iterator[int]:
    """A port already in use: a store that passes its checks fails at 'cannot listen'."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


@pytest.mark.parametrize("case", sorted(BAD_STORES))
def test_a_store_that_cannot_be_served_is_one_line_and_exit_code_2(
    tmp_path: Path, filled: Path, taken_port: int, case: str
) -> None:
    make, needle = BAD_STORES[case]
    path = tmp_path / "store.db"
    if case == "a missing directory":
        path = tmp_path / "nowhere" / "store.db"
    elif case == "a read-only place":
        path = Path("/sys/contextfold-store.db")  # not even root may create files here
    elif case == "a truncated store":
        path.write_bytes(filled.read_bytes()[: filled.stat().st_size // 2])
    elif case == "a corrupted store":
        path.write_bytes(filled.read_bytes())
        _corrupt_pages(path)
    elif make is not None:
        make(path)
    argv = ["serve", "--upstream", "http://127.0.0.1:9/v1", "--no-auth", "-s", "full"]
    result = CliRunner().invoke(app, [*argv, "--store", str(path), "--port", str(taken_port)])
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and str(path) in lines[0] and needle in lines[0], result.output
    assert "cannot listen" not in result.output and "Traceback" not in result.output


def test_one_unreadable_session_is_skipped_and_reported_and_the_others_served(
    filled: Path,
) -> None:
    with sqlite3.connect(filled) as conn:
        conn.execute("UPDATE steps SET messages = '{broken' WHERE session_id = 's07' AND idx = 3")
    before = {sid: m for sid, m in stored_readable(filled).items()}
    with ScriptedServer() as up, serving(up, filled, strategy="full") as proxy:
        assert [sid for sid, _ in proxy.proxy.skipped] == ["s07"]
        assert "s07" in proxy.proxy.skipped[0][1] and "step 3" in proxy.proxy.skipped[0][1]
        chat = client(proxy)
        more = [*before["s12"], {"role": "assistant", "content": "x"}]
        more.append({"role": "user", "content": "one more"})
        assert chat.chat.completions.create(model="m", messages=more).choices
        base = proxy.url.removesuffix("/v1")
        metrics = httpx.get(f"{base}/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
        assert metric(metrics.text, "sessions_skipped") == 1
    after = stored_readable(filled)
    assert after["s12"] == canonical(more)  # continued in place: no branch, no copy
    assert set(after) == set(before)
    with sqlite3.connect(filled) as conn:  # the unreadable row is left as it was
        row = conn.execute("SELECT messages FROM steps WHERE session_id = 's07' AND idx = 3")
        assert row.fetchone() == ("{broken",)


def stored_readable(path: Path) -> dict[str, list[dict[str, Any]]]:
    """Every session of a store that loads: its conversation as OpenAI dicts."""
    out = {}
    with SQLiteStore(path) as store:
        for sid in store.list_sessions():
            try:
                record = store.load_session(sid)
            except Exception:
                continue
            out[sid] = [to_openai(m) for step in record.steps for m in step.messages]
    return out


def _modes(path: Path) -> dict[str, int]:
    files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
    return {f.name: stat.S_IMODE(f.stat().st_mode) for f in files if f.exists()}


def test_every_store_file_a_command_creates_is_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "run.db"
    with SQLiteStore(path) as store:  # as run --store opens it
        History(None, store=store, session_id="a").append(UserMessage("hi"))
        modes = _modes(path)
        assert set(modes) == {"run.db", "run.db-wal", "run.db-shm"}
        assert set(modes.values()) == {0o600}, modes
    cache = FoldCache(tmp_path / "folds.sqlite")
    assert set(_modes(tmp_path / "folds.sqlite").values()) == {0o600}
    cache.close()


def test_serve_tightens_the_store_and_its_sidecars(tmp_path: Path) -> None:
    path = tmp_path / "loose.db"
    with SQLiteStore(path) as writer:  # another process holds it open: the sidecars exist
        History(None, store=writer, session_id="a").append(UserMessage("hi"))
        for name in _modes(path):
            os.chmod(tmp_path / name, 0o644)
        with ScriptedServer() as up, serving(up, path) as proxy:
            assert set(_modes(path)) == {"loose.db", "loose.db-wal", "loose.db-shm"}
            assert set(_modes(path).values()) == {0o600}, _modes(path)
            assert proxy.proxy.sessions is not None
