"""PostgreSQL specifics: URLs, errors, schema checks, and appends from many writers at once."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from contextfold.core.errors import StoreConflictError, StoreError
from contextfold.core.history import make_step
from contextfold.core.messages import AssistantMessage, UserMessage
from contextfold.core.store import PostgresStore, SQLiteStore, display_store, open_store
from contextfold.core.tokens import ApproxCounter
from contextfold.testing.postgres import TempPostgres
from tests.test_store import run_writer_and_kill, writer

pytestmark = pytest.mark.postgres

COUNTER = ApproxCounter()


def test_open_store_routes_urls_and_paths(postgres: TempPostgres, tmp_path: Path) -> None:
    url = postgres.new_database()
    with open_store(url) as store:
        assert isinstance(store, PostgresStore)
    with open_store(url.replace("postgresql://", "postgres://")) as store:
        assert isinstance(store, PostgresStore)
    with open_store(tmp_path / "s.db") as store:
        assert isinstance(store, SQLiteStore)


def test_password_never_shown() -> None:
    shown = display_store("postgresql://alice:s3cret@db.example:5433/cf")
    assert shown == "postgresql://alice@db.example:5433/cf"


def test_unreachable_server_is_store_error(postgres: TempPostgres) -> None:
    dead = f"postgresql://u:pw@127.0.0.1:{_closed_port()}/x"
    with pytest.raises(StoreError, match="cannot connect to the store") as info:
        PostgresStore(dead, timeout=2)
    assert "pw" not in str(info.value) and "check that the PostgreSQL server runs" in str(
        info.value
    )


def test_bad_url_is_store_error() -> None:
    with pytest.raises(StoreError, match="store"):
        PostgresStore("postgresql://host:notaport/db", timeout=2)


def test_missing_database_is_store_error(postgres: TempPostgres) -> None:
    with pytest.raises(StoreError, match="cannot connect"):
        PostgresStore(postgres.url("no_such_db"), timeout=2)


def test_foreign_tables_refused_and_left_alone(postgres: TempPostgres) -> None:
    url = postgres.new_database()
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE sessions (x int)")
    with pytest.raises(StoreError, match="not one; give an empty database"):
        PostgresStore(url)
    with psycopg.connect(url, autocommit=True) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchall()
    assert tables == [("sessions",)]


def test_other_schema_version_refused(postgres: TempPostgres) -> None:
    url = postgres.new_database()
    PostgresStore(url).close()
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE contextfold_schema SET version = 99")
    with pytest.raises(StoreError, match="schema version 99"):
        PostgresStore(url)


def test_closed_store_raises(postgres: TempPostgres) -> None:
    store = PostgresStore(postgres.new_database())
    store.close()
    store.close()
    with pytest.raises(StoreError, match="is closed"):
        store.list_sessions()


def test_two_connections_see_each_others_appends(postgres: TempPostgres) -> None:
    url = postgres.new_database()
    with PostgresStore(url) as a, PostgresStore(url) as b:
        a.create_session("s", system=None, counter="c", meta={})
        a.append_step("s", make_step(0, [UserMessage("from a")], COUNTER))
        with pytest.raises(StoreError, match="step index 0 is not the next index 1"):
            b.append_step("s", make_step(0, [UserMessage("from b")], COUNTER))
        b.append_step("s", make_step(1, [AssistantMessage("from b")], COUNTER))
        assert len(a.load_session("s").steps) == 2
        assert a.step_counts() == b.step_counts() == {"s": 2}


def test_concurrent_appends_to_one_session_are_serialised(postgres: TempPostgres) -> None:
    """Eight writers, each on its own connection, race to append the next step 25 times; every
    index is won by exactly one of them and the others are told it is not next. After each
    step it won, a writer records a call sent the steps so far: that too is refused when
    another writer appended in between, so every call points just after its writer's step."""
    url = postgres.new_database()
    with PostgresStore(url) as setup:
        setup.create_session("race", system=None, counter="c", meta={})
    won: list[tuple[int, int]] = []
    lost = {"steps": 0, "calls": 0}
    lock = threading.Lock()
    start = threading.Barrier(8)

    def writer(n: int) -> None:
        with PostgresStore(url) as store:
            start.wait()
            for _ in range(25):
                index = store.step_counts()["race"]
                try:
                    store.append_step("race", make_step(index, [UserMessage(f"w{n}")], COUNTER))
                except StoreConflictError as exc:
                    assert "is not the next index" in str(exc)
                    with lock:
                        lost["steps"] += 1
                    continue
                with lock:
                    won.append((index, n))
                try:
                    store.record_call("race", step=index + 1, messages=[], usage={"n": n})
                except StoreConflictError as exc:
                    assert f"a call sent {index + 1} steps" in str(exc)
                    with lock:
                        lost["calls"] += 1

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with PostgresStore(url) as store:
        record = store.load_session("race")
        calls = store.load_calls("race")
    assert sorted(i for i, _ in won) == list(range(len(won)))  # no index twice, none skipped
    assert len(won) + lost["steps"] == 8 * 25
    assert [s.index for s in record.steps] == list(range(len(won)))
    winners = dict(won)
    assert [s.message.content for s in record.steps] == [f"w{winners[i]}" for i in range(len(won))]
    steps = [c["step"] for c in calls]
    assert steps == sorted(set(steps))  # one call per step at most, in order
    assert steps[-1] == len(won)  # nobody appended after the last step: its call is kept
    assert all(c["usage"]["n"] == winners[c["step"] - 1] for c in calls)
    assert len(calls) + lost["calls"] == len(won)  # each won step: its call kept or refused


@pytest.mark.parametrize("acked_before_kill", [5, 200])
def test_sigkill_mid_append_loses_no_acknowledged_step(
    postgres: TempPostgres, acked_before_kill: int
) -> None:
    url = postgres.new_database()
    last_acked = run_writer_and_kill(url, acked_before_kill)
    with PostgresStore(url) as store:
        record = store.load_session(writer.SESSION)
        counts = store.step_counts()
    assert record.system == writer.SYSTEM
    assert [s.index for s in record.steps] == list(range(len(record.steps)))
    assert len(record.steps) - 1 >= last_acked
    assert counts == {writer.SESSION: len(record.steps)}  # the count moved with each step
    for step in record.steps:
        assert step == writer.crash_step(step.index)


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_the_run_command_opens_a_postgresql_store(postgres: TempPostgres) -> None:
    from typer.testing import CliRunner

    from contextfold.cli import app
    from contextfold.core.history import History
    from contextfold.core.messages import SystemMessage

    url = postgres.new_database().replace("@", ":hunter2@", 1)  # trust auth ignores it
    with PostgresStore(url) as store:
        History(SystemMessage("s"), store=store, session_id="taken")
    args = ["run", "--env", "tutorial:budget", "--model", "openai:m", "--store", url]
    taken = CliRunner().invoke(app, [*args, "--session", "taken"])
    assert taken.exit_code == 2 and "already exists" in taken.output
    missing = CliRunner().invoke(app, [*args, "--resume", "nope"])
    assert missing.exit_code == 2 and "no session 'nope'" in missing.output
    assert "hunter2" not in taken.output + missing.output
