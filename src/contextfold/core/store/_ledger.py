"""The ``ledger`` table of the SQL stores (SQLite, PostgreSQL): its schema in each dialect,
its statements, and its rows read back (:class:`~contextfold.core.ledger.LedgerEntry`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any, Literal

from contextfold.core.errors import StoreError
from contextfold.core.ledger import LEDGER_COLUMNS, LedgerEntry
from contextfold.core.store._common import now

__all__ = ["LEDGER_INSERT", "LEDGER_SELECT", "decode_ledger", "ledger_schema", "stamped"]

_TEXT = {"session_id", "unit", "arm", "model", "api", "created_at"}
_NULLABLE = {"stop", "error"}
_MONEY = {"billed_usd", "direct_usd"}


def ledger_schema(dialect: Literal["sqlite", "postgres"]) -> str:
    """``CREATE TABLE ledger``: one row per upstream call, in the order they were made. No
    foreign key: a call is billed even when its request failed and its session was never
    written."""
    key = (
        "entry_idx  INTEGER PRIMARY KEY AUTOINCREMENT"
        if dialect == "sqlite"
        else "entry_idx  BIGSERIAL PRIMARY KEY"
    )
    count, money = ("INTEGER", "REAL") if dialect == "sqlite" else ("BIGINT", "DOUBLE PRECISION")
    columns = [f"    {key}"]
    for name in LEDGER_COLUMNS:
        kind = "TEXT" if name in _TEXT | _NULLABLE else money if name in _MONEY else count
        columns.append(f"    {name} {kind}{'' if name in _NULLABLE else ' NOT NULL'}")
    return "CREATE TABLE ledger (\n" + ",\n".join(columns) + "\n)"


def _insert(placeholder: str) -> str:
    marks = ", ".join([placeholder] * len(LEDGER_COLUMNS))
    return f"INSERT INTO ledger ({', '.join(LEDGER_COLUMNS)}) VALUES ({marks})"


LEDGER_INSERT = {"sqlite": _insert("?"), "postgres": _insert("%s")}
LEDGER_SELECT = f"SELECT entry_idx, {', '.join(LEDGER_COLUMNS)} FROM ledger ORDER BY entry_idx"


def decode_ledger(rows: Iterable[tuple[Any, ...]], where: str) -> list[LedgerEntry]:
    """The entries of ``ledger`` rows (:data:`LEDGER_SELECT`'s); a row that is not one is a
    StoreError naming the store and the row."""
    out = []
    for row in rows:
        try:
            out.append(LedgerEntry.from_row(tuple(row[1:])))
        except (ValueError, TypeError) as exc:
            raise StoreError(
                f"{where} is corrupt: ledger entry {row[0]}: {exc} (the store was changed "
                "outside contextfold; restore a copy)"
            ) from exc
    return out


def stamped(entry: LedgerEntry) -> LedgerEntry:
    """``entry`` with the time it is written, unless it has one."""
    return entry if entry.created_at else replace(entry, created_at=now())
