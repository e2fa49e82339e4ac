"""The ``make_store`` fixture the store tests share: every kind of store, each opened again as
a caller would (a new connection to one SQLite file or one PostgreSQL database)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from contextfold.core.store import MemoryStore, PostgresStore, SQLiteStore

__all__ = ["StoreFactory", "make_store"]

StoreFactory = Callable[[], MemoryStore | SQLiteStore | PostgresStore]


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """A factory that returns the same store (memory) or a fresh connection to one file or
    one database (a new database per test on the session's PostgreSQL server)."""
    opened: list[SQLiteStore | PostgresStore] = []
    memory = MemoryStore()
    url = request.getfixturevalue("postgres").new_database() if request.param == "postgres" else ""

    def factory() -> MemoryStore | SQLiteStore | PostgresStore:
        if request.param == "memory":
            return memory
        store = PostgresStore(url) if url else SQLiteStore(tmp_path / "s.db")
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()
