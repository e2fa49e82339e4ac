"""Stores: exact round trips, append invariants, error messages, WAL, and a real crash test."""

from __future__ import annotations

import importlib.util
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Literal

import pytest

from contextfold.core.errors import StoreConflictError, StoreError
from contextfold.core.folds import FoldRecord
from contextfold.core.history import History, Step, make_step
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    Part,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.core.protocols import Store
from contextfold.core.store import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    PostgresStore,
    SQLiteStore,
)
from contextfold.core.tokens import ApproxCounter
from contextfold.serve.sessions.buffered import BufferedStore
from contextfold.testing.postgres import TempPostgres
from tests._stores import StoreFactory

WRITER = Path(__file__).with_name("_store_writer.py")
COUNTER = ApproxCounter()
SYSTEM = SystemMessage("You are a careful agent. Système ✓")


def _load_writer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_store_writer", WRITER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


writer = _load_writer()


def conversation() -> list[list[Message]]:
    """User, assistant with tool calls and results (one empty), reasoning, unicode."""
    calls = (
        ToolCall("call_1", "read_file", '{"path": "naïve/файл.txt"}'),
        ToolCall("call_2", "list_dir", "{}"),
    )
    return [
        [UserMessage("Fix the bug in 文件.py 🐛", name="alice")],
        [
            AssistantMessage("Let me look.", tool_calls=calls, reasoning="First read, then list."),
            ToolMessage("def f():\n    return 1 — ok\n", "call_1", name="read_file"),
            ToolMessage("", "call_2"),
        ],
        [AssistantMessage(None, tool_calls=(ToolCall("c3", "noop"),)), ToolMessage("   ", "c3")],
        [AssistantMessage("", reasoning="")],
        [UserMessage("lone surrogate \ud800 and emoji 👩‍💻, quotes \"'\\ and \x00 nul")],
        [AssistantMessage("Done. 完成。", reasoning="所有测试通过")],
        [  # provider parts (a thinking block with its signature, an image in a result)
            AssistantMessage("Reading.", tool_calls=(ToolCall("c4", "read"),), parts=(THINKING,)),
            ToolMessage("a screenshot", "c4", parts=(IMAGE,)),
        ],
    ]


THINKING = Part.of(
    "anthropic:layout",
    {"blocks": [{"type": "thinking", "thinking": "why", "signature": "c2ln"}]},
    text="why",
)
IMAGE = Part.of("anthropic:layout", {"blocks": [{"type": "image"}]}, tokens=1600)


def make_steps() -> list[Step]:
    return [make_step(i, msgs, COUNTER) for i, msgs in enumerate(conversation())]


# --- round trips ----------------------------------------------------------------------------


def test_every_store_satisfies_the_protocol(make_store: StoreFactory) -> None:
    assert isinstance(make_store(), Store)
    assert isinstance(BufferedStore(make_store()), Store)


def test_closing_a_buffered_store_drops_its_writes_and_leaves_the_store_open(
    make_store: StoreFactory,
) -> None:
    inner = make_store()
    buffer = BufferedStore(inner)
    buffer.create_session("s", system=None, counter="c", meta={})
    assert buffer.pending == 1
    buffer.close()
    buffer.commit()
    assert inner.list_sessions() == []  # dropped, and the wrapped store still answers


def test_roundtrip_through_history_open(make_store: StoreFactory) -> None:
    store = make_store()
    meta = {"task": "swe-bench/123", "tags": ["a", "ü"], "n": 3, "nested": {"x": None}}
    history = History(SYSTEM, counter=COUNTER, store=store, session_id="s1", meta=meta)
    steps = make_steps()
    for step in steps:
        history.append_step(step)

    reopened = History.open(make_store(), "s1", counter=ApproxCounter())

    assert list(reopened.steps) == steps
    assert [s.index for s in reopened.steps] == list(range(len(steps)))
    assert reopened.system == SYSTEM
    assert reopened.meta == meta
    assert reopened.messages() == history.messages()
    assert reopened.latest_user_index == history.latest_user_index


def test_reopened_history_keeps_appending(make_store: StoreFactory) -> None:
    history = History(None, counter=COUNTER, store=make_store(), session_id="s")
    history.append(UserMessage("one"))
    reopened = History.open(make_store(), "s", counter=COUNTER)
    reopened.append(AssistantMessage("two"))
    record = make_store().load_session("s")
    assert record.system is None
    assert record.counter == COUNTER.name
    assert [s.message.content for s in record.steps] == ["one", "two"]


def test_session_without_steps_roundtrips(make_store: StoreFactory) -> None:
    make_store().create_session("empty", system=None, counter="x", meta={})
    record = make_store().load_session("empty")
    assert (record.system, record.counter, record.steps, dict(record.meta)) == (None, "x", [], {})


def test_list_sessions_sorted(make_store: StoreFactory) -> None:
    store = make_store()
    for sid in ["b", "a", "Z", "é", "a2"]:
        store.create_session(sid, system=None, counter="c", meta={})
    assert make_store().list_sessions() == ["Z", "a", "a2", "b", "é"]


def test_calls_roundtrip(make_store: StoreFactory) -> None:
    store = make_store()
    store.create_session("s", system=SYSTEM, counter="c", meta={})
    store.append_step("s", make_step(0, [UserMessage("hi ✓")], COUNTER))
    sent: list[Message] = [SYSTEM, UserMessage("hi ✓")]
    store.record_call("s", step=1, messages=sent, usage={"prompt_tokens": 12, "cached_tokens": 8})
    more: list[Message] = [AssistantMessage("yo"), UserMessage("and?")]
    for index, message in enumerate(more, start=1):
        store.append_step("s", make_step(index, [message], COUNTER))
    store.record_call("s", step=3, messages=[*sent, *more], usage={})
    calls = make_store().load_calls("s")
    assert [c["call"] for c in calls] == [0, 1]
    assert [c["step"] for c in calls] == [1, 3]
    assert calls[0]["messages"] == sent
    assert calls[1]["messages"] == [*sent, *more]
    assert calls[0]["usage"] == {"prompt_tokens": 12, "cached_tokens": 8}
    assert isinstance(calls[0]["created_at"], str)


# --- invariants -----------------------------------------------------------------------------


@pytest.mark.parametrize("bad_index", [0, 2, 5, -1])
def test_index_gap_rejected_without_writing(make_store: StoreFactory, bad_index: int) -> None:
    store = make_store()
    store.create_session("s", system=None, counter=COUNTER.name, meta={})
    store.append_step("s", make_step(0, [UserMessage("first")], COUNTER))
    with pytest.raises(StoreError, match=rf"step index {bad_index} is not the next index 1"):
        store.append_step("s", make_step(bad_index, [UserMessage("bad")], COUNTER))
    steps = make_store().load_session("s").steps
    assert [s.message.content for s in steps] == ["first"]
    store.append_step("s", make_step(1, [AssistantMessage("next")], COUNTER))  # still usable
    assert len(make_store().load_session("s").steps) == 2


@pytest.mark.parametrize("stale", [0, 1, 3])
def test_call_not_at_the_step_count_rejected_without_writing(
    make_store: StoreFactory, stale: int
) -> None:
    """A call record names the steps its prompt held: if the session holds more (another
    writer appended after the prompt was built) or fewer, it is a conflict, nothing written."""
    store = make_store()
    store.create_session("s", system=None, counter=COUNTER.name, meta={})
    for index in range(2):
        store.append_step("s", make_step(index, [UserMessage(f"m{index}")], COUNTER))
    with pytest.raises(StoreConflictError, match=rf"a call sent {stale} steps .* holds 2;"):
        store.record_call("s", step=stale, messages=[], usage={"n": 1})
    assert make_store().load_calls("s") == []
    store.record_call("s", step=2, messages=[], usage={"n": 2})  # still usable
    assert [c["usage"] for c in make_store().load_calls("s")] == [{"n": 2}]


def test_step_with_mismatched_counts_rejected(make_store: StoreFactory) -> None:
    store = make_store()
    store.create_session("s", system=None, counter="c", meta={})
    step = Step(index=0, messages=(UserMessage("x"),), tokens=(), hashes=("h",))
    with pytest.raises(StoreError, match="make_step"):
        store.append_step("s", step)
    assert make_store().load_session("s").steps == []


def test_duplicate_session_rejected(make_store: StoreFactory) -> None:
    store = make_store()
    store.create_session("dup", system=SYSTEM, counter="c", meta={"v": 1})
    with pytest.raises(StoreError, match="'dup' already exists"):
        store.create_session("dup", system=None, counter="other", meta={"v": 2})
    record = make_store().load_session("dup")
    assert (record.system, record.counter, dict(record.meta)) == (SYSTEM, "c", {"v": 1})


def test_missing_session_named(make_store: StoreFactory) -> None:
    store = make_store()
    with pytest.raises(StoreError, match="session 'nope' does not exist"):
        store.load_session("nope")
    with pytest.raises(StoreError, match="session 'nope' does not exist"):
        store.append_step("nope", make_step(0, [UserMessage("x")], COUNTER))
    with pytest.raises(StoreError, match="session 'nope' does not exist"):
        store.record_call("nope", step=0, messages=[], usage={})
    with pytest.raises(StoreError, match="session 'nope' does not exist"):
        store.load_calls("nope")
    assert make_store().list_sessions() == []


def test_meta_must_be_json(make_store: StoreFactory) -> None:
    with pytest.raises(StoreError, match="metadata of session 's' is not JSON-serializable"):
        make_store().create_session("s", system=None, counter="c", meta={"x": object()})
    assert make_store().list_sessions() == []


def test_meta_comes_back_as_json_values(make_store: StoreFactory) -> None:
    make_store().create_session("s", system=None, counter="c", meta={"t": (1, 2)})
    assert make_store().load_session("s").meta == {"t": [1, 2]}


# --- SQLite specifics -----------------------------------------------------------------------


@pytest.mark.parametrize("synchronous", ["FULL", "NORMAL"])
def test_wal_mode_and_pragmas(tmp_path: Path, synchronous: Literal["FULL", "NORMAL"]) -> None:
    path = tmp_path / "wal.db"
    with SQLiteStore(path, synchronous=synchronous) as store:
        store.create_session("s", system=None, counter="c", meta={})
        conn = store._db()
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert (
            conn.execute("PRAGMA synchronous").fetchone()[0]
            == {"NORMAL": 1, "FULL": 2}[synchronous]
        )
        assert Path(f"{path}-wal").exists()
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # persistent in the file
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert raw.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    finally:
        raw.close()


def test_garbage_file_is_store_error(tmp_path: Path) -> None:
    path = tmp_path / "garbage.db"
    path.write_bytes(b"this is not a database at all\n" * 200)
    with pytest.raises(StoreError, match=r"garbage\.db.*not a contextfold store"):
        SQLiteStore(path)
    assert path.read_bytes() == b"this is not a database at all\n" * 200


def test_foreign_sqlite_db_is_store_error(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    raw = sqlite3.connect(path)
    raw.execute("CREATE TABLE t (x)")
    raw.commit()
    raw.close()
    with pytest.raises(StoreError, match=r"other\.db: it is an SQLite database but not a context"):
        SQLiteStore(path)


def test_newer_schema_is_store_error(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    SQLiteStore(path).close()
    raw = sqlite3.connect(path)
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    raw.close()
    with pytest.raises(StoreError, match="newer schema version"):
        SQLiteStore(path)


def test_missing_directory_is_store_error(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "dir" / "s.db"
    with pytest.raises(StoreError, match=r"directory .*dir does not exist; create it first"):
        SQLiteStore(path)
    with pytest.raises(StoreError, match="is a directory"):
        SQLiteStore(tmp_path)


def test_in_memory_path_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError, match="MemoryStore"):
        SQLiteStore(":memory:")
    assert list(tmp_path.iterdir()) == []  # no file named ':memory:' left in the cwd


def test_corrupt_row_names_file_and_step(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    with SQLiteStore(path) as store:
        store.create_session("s", system=None, counter="c", meta={})
        for step in make_steps()[:3]:
            store.append_step("s", step)
    raw = sqlite3.connect(path)
    raw.execute('UPDATE steps SET messages = \'[{"role": "nobody"}]\' WHERE idx = 1')
    raw.commit()
    raw.close()
    with SQLiteStore(path) as store, pytest.raises(StoreError) as info:
        store.load_session("s")
    assert str(path) in str(info.value)
    assert "session 's', step 1" in str(info.value)


def test_a_closed_store_refuses_every_call_and_reopening_gives_the_same_session(
    tmp_path: Path,
) -> None:
    path = tmp_path / "x.db"
    steps = make_steps()
    with SQLiteStore(path) as store:  # the context manager closes it
        history = History(SYSTEM, counter=COUNTER, store=store, session_id="s", meta={"n": 1})
        for step in steps[:3]:
            history.append_step(step)
        store.record_call("s", step=3, messages=history.messages(), usage={"prompt_tokens": 9})
        before = store.load_session("s")
    store.close()  # idempotent
    fold = FoldRecord("compact", "summary", 0, 2, 3, False, {"raw": "x"}, "too long")
    calls: dict[str, Callable[[], object]] = {
        "create_session": lambda: store.create_session("t", system=None, counter="c", meta={}),
        "append_step": lambda: store.append_step("s", steps[3]),
        "append_fold": lambda: store.append_fold("s", fold),
        "record_call": lambda: store.record_call("s", step=3, messages=(), usage={}),
        "load_session": lambda: store.load_session("s"),
        "list_sessions": store.list_sessions,
        "load_calls": lambda: store.load_calls("s"),
    }
    for name, call in calls.items():
        try:
            call()
        except StoreError as exc:
            assert f"the store {path} is closed" in str(exc), name
        else:
            pytest.fail(f"{name} on a closed store did not raise")
    with pytest.raises(StoreError, match="is closed"):
        history.append_step(steps[3])
    assert len(history) == 3 and "[closed]" in repr(store)

    with SQLiteStore(path) as reopened:
        assert reopened.list_sessions() == ["s"]
        assert reopened.load_session("s") == before
        assert list(reopened.load_session("s").steps) == steps[:3]
        assert [c["step"] for c in reopened.load_calls("s")] == [3]
        History.open(reopened, "s", counter=COUNTER).append_step(steps[3])
        assert len(reopened.load_session("s").steps) == 4


def test_other_thread_is_store_error(tmp_path: Path) -> None:
    errors: list[BaseException] = []
    with SQLiteStore(tmp_path / "t.db") as store:

        def use() -> None:
            try:
                store.list_sessions()
            except BaseException as exc:
                errors.append(exc)

        thread = threading.Thread(target=use)
        thread.start()
        thread.join()
    assert len(errors) == 1 and isinstance(errors[0], StoreError)


def test_two_connections_see_each_others_appends(tmp_path: Path) -> None:
    path = tmp_path / "two.db"
    with SQLiteStore(path) as a, SQLiteStore(path) as b:
        a.create_session("s", system=None, counter="c", meta={})
        a.append_step("s", make_step(0, [UserMessage("from a")], COUNTER))
        with pytest.raises(StoreError, match="step index 0 is not the next index 1"):
            b.append_step("s", make_step(0, [UserMessage("from b")], COUNTER))
        b.append_step("s", make_step(1, [AssistantMessage("from b")], COUNTER))
        assert len(a.load_session("s").steps) == 2


# --- crash test -----------------------------------------------------------------------------


@pytest.mark.parametrize("acked_before_kill", [5, 50, 200])
def test_sigkill_mid_append_loses_no_acknowledged_step(
    tmp_path: Path, acked_before_kill: int
) -> None:
    path = tmp_path / "crash.db"
    last_acked = run_writer_and_kill(path, acked_before_kill)
    assert last_acked >= acked_before_kill - 1

    with SQLiteStore(path) as store:
        record = store.load_session(writer.SESSION)
    assert record.system == writer.SYSTEM
    assert [s.index for s in record.steps] == list(range(len(record.steps)))  # contiguous
    assert len(record.steps) - 1 >= last_acked
    for step in record.steps:
        assert step == writer.crash_step(step.index)  # messages, tokens and hashes intact

    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert raw.execute("PRAGMA foreign_key_check").fetchall() == []
    finally:
        raw.close()


def run_writer_and_kill(path: Path | str, acked_before_kill: int) -> int:
    """Start the writer, read acknowledgements until enough, SIGKILL it; the last index seen."""
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    watchdog = threading.Timer(30.0, proc.kill)  # a hung child gives EOF instead of a hang
    watchdog.start()
    last = -1
    try:
        assert proc.stdout is not None
        for _ in range(acked_before_kill):
            line = proc.stdout.readline()
            if not line:
                break
            last = int(line)
        if last == acked_before_kill - 1:
            os.kill(proc.pid, signal.SIGKILL)  # the child is still looping, likely mid-append
        proc.wait(timeout=30)
    finally:
        watchdog.cancel()
        stderr = proc.stderr.read() if proc.stderr else ""
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    assert proc.returncode == -signal.SIGKILL, f"writer did not run until killed:\n{stderr}"
    assert last == acked_before_kill - 1, f"writer acknowledged only {last + 1} steps:\n{stderr}"
    return last


# --- replies kept (what ``contextfold serve`` keeps of a reply it served, to put the
# strategy's marker lines back when the client returns it), and older stores upgraded


REPLY = AssistantMessage(
    "Done.\nPROGRESS: did it\nSTALE: none ✓",
    tool_calls=(ToolCall("c1", "bash", '{"cmd": "ls"}'),),
    parts=(Part.of("anthropic:layout", {"t": [{"type": "text", "text": 5}], "h": "x"}),),
)


def _session(store: StoreFactory, steps: int) -> None:
    opened = store()
    opened.create_session("s", system=None, counter=COUNTER.name, meta={})
    for index in range(steps):
        opened.append_step("s", make_step(index, [UserMessage(f"m{index}")], COUNTER))


def test_replies_round_trip_by_the_steps_they_answered(make_store: StoreFactory) -> None:
    _session(make_store, 1)
    store = make_store()
    store.record_reply("s", step=1, message=AssistantMessage("first"))
    store.record_reply("s", step=1, message=REPLY)  # a retry's
    assert make_store().load_replies("s", step=1) == [REPLY, AssistantMessage("first")]
    assert make_store().load_replies("s", step=0) == []


@pytest.mark.parametrize("stale", [0, 2])
def test_a_reply_not_at_the_step_count_is_refused(make_store: StoreFactory, stale: int) -> None:
    _session(make_store, 1)
    with pytest.raises(StoreConflictError, match="holds 1; nothing was written"):
        make_store().record_reply("s", step=stale, message=REPLY)
    assert make_store().load_replies("s", step=stale) == []


def test_a_sqlite_store_of_version_2_gains_replies(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with SQLiteStore(path) as store:
        store.create_session("s", system=None, counter=COUNTER.name, meta={})
        store.append_step("s", make_step(0, [UserMessage("kept")], COUNTER))
    raw = sqlite3.connect(path)
    raw.execute("DROP TABLE replies")
    raw.execute("DROP TABLE ledger")
    raw.execute("PRAGMA user_version = 2")
    raw.commit()
    raw.close()
    with SQLiteStore(path) as store:
        assert store.load_session("s").steps[0].message.content == "kept"
        store.record_reply("s", step=1, message=REPLY)
        assert store.load_replies("s", step=1) == [REPLY]


@pytest.mark.postgres
def test_a_postgres_store_of_version_1_gains_replies(postgres: TempPostgres) -> None:
    import psycopg

    url = postgres.new_database()
    with PostgresStore(url) as store:
        store.create_session("s", system=None, counter=COUNTER.name, meta={})
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE replies")
        conn.execute("DROP TABLE ledger")
        conn.execute("UPDATE contextfold_schema SET version = 1")
    with PostgresStore(url) as store:
        store.record_reply("s", step=0, message=REPLY)
        assert store.load_replies("s", step=0) == [REPLY]
