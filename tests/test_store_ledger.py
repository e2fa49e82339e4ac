"""Every store keeps serve's ledger: entries come back as written, in order, from a new
connection; an older store gains the table in place; a corrupt row is one clear error."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from contextfold.core.billing import BilledUsage
from contextfold.core.errors import StoreError
from contextfold.core.ledger import LedgerEntry
from contextfold.core.protocols import LedgerStore
from contextfold.core.store import PostgresStore, SQLiteStore
from contextfold.testing.postgres import TempPostgres
from tests._stores import StoreFactory

ENTRY = LedgerEntry(
    session_id="fam~2",
    unit="fam",
    arm="control",
    step=7,
    round_idx=1,
    model="claude-sonnet-4-5",
    api="anthropic",
    billed=BilledUsage(12, 3400, 560, 78, 90),
    billed_usd=0.0123456789,
    direct=BilledUsage(1, 2, 3, 4, 5),
    direct_usd=1.5e-7,
    sent_tokens=4100,
    direct_tokens=5200,
    stop="tool_calls",
)


def test_a_ledger_comes_back_as_written_in_order(make_store: StoreFactory) -> None:
    store = make_store()
    assert isinstance(store, LedgerStore) and store.load_ledger() == []
    failed = replace(ENTRY, round_idx=0, billed=BilledUsage(), stop=None, error="overloaded")
    store.record_ledger(ENTRY)
    store.record_ledger(failed)
    found = make_store().load_ledger()  # another connection: written durably
    assert [replace(e, created_at="") for e in found] == [ENTRY, failed]
    assert all(e.created_at for e in found) and found[0].created_at <= found[1].created_at
    assert found[0].restore and not found[1].restore


def test_an_entry_needs_no_session_stored(make_store: StoreFactory) -> None:
    """A call is billed even when its request failed and its session was never written."""
    store = make_store()
    store.record_ledger(ENTRY)
    assert store.list_sessions() == [] and len(store.load_ledger()) == 1


def test_a_sqlite_store_of_version_3_gains_the_ledger(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with SQLiteStore(path) as store:
        store.create_session("s", system=None, counter="approx", meta={})
    raw = sqlite3.connect(path)
    raw.execute("DROP TABLE ledger")
    raw.execute("PRAGMA user_version = 3")
    raw.commit()
    raw.close()
    with SQLiteStore(path) as store:
        assert store.list_sessions() == ["s"]
        store.record_ledger(ENTRY)
        assert len(store.load_ledger()) == 1


def test_a_corrupt_ledger_row_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SQLiteStore(path) as store:
        store.record_ledger(ENTRY)
    raw = sqlite3.connect(path)
    raw.execute("UPDATE ledger SET arm = 'both'")
    raw.commit()
    raw.close()
    with SQLiteStore(path) as store, pytest.raises(StoreError) as info:
        store.load_ledger()
    assert str(info.value).startswith(f"{path} is corrupt: ledger entry 1: arm 'both'")


@pytest.mark.postgres
def test_a_postgres_store_of_version_2_gains_the_ledger(postgres: TempPostgres) -> None:
    import psycopg

    url = postgres.new_database()
    with PostgresStore(url) as store:
        store.create_session("s", system=None, counter="approx", meta={})
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE ledger")
        conn.execute("UPDATE contextfold_schema SET version = 2")
    with PostgresStore(url) as store:
        store.record_ledger(ENTRY)
        assert [replace(e, created_at="") for e in store.load_ledger()] == [ENTRY]
