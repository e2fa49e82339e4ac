"""One entry point for a store argument: a file path opens SQLite, a URL opens PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from contextfold.core.store._postgres_open import display_url, is_postgres_url
from contextfold.core.store.postgres import PostgresStore
from contextfold.core.store.sqlite import SQLiteStore

__all__ = ["display_store", "is_postgres_url", "open_store"]


def open_store(
    target: str | Path,
    *,
    synchronous: Literal["NORMAL", "FULL"] = "FULL",
    timeout: float = 10.0,
) -> SQLiteStore | PostgresStore:
    """``postgresql://...`` or ``postgres://...`` opens a :class:`PostgresStore`; anything
    else is the path of a :class:`SQLiteStore` file (``synchronous`` applies to SQLite only:
    PostgreSQL commits are durable as the server is configured)."""
    if is_postgres_url(target):
        return PostgresStore(str(target), timeout=timeout)
    return SQLiteStore(target, synchronous=synchronous, timeout=timeout)


def display_store(target: str | Path) -> str:
    """The store argument as messages show it (a URL without its password)."""
    return display_url(str(target)) if is_postgres_url(target) else str(target)
