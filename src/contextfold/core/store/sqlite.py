"""The SQLite session store, :class:`SQLiteStore` (one file, WAL mode)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from contextfold.core.errors import StoreConflictError, StoreError
from contextfold.core.folds import FoldRecord
from contextfold.core.history import Step
from contextfold.core.ledger import LedgerEntry
from contextfold.core.messages import AssistantMessage, Message, SystemMessage
from contextfold.core.protocols import SessionRecord
from contextfold.core.store._codec import Decoder
from contextfold.core.store._common import (
    Connected,
    call_row,
    check_call_at,
    check_fold,
    dumps,
    missing,
    not_next,
    now,
    reply_row,
    session_row,
    step_row,
)
from contextfold.core.store._ledger import LEDGER_INSERT, LEDGER_SELECT, decode_ledger, stamped
from contextfold.core.store._sqlite_open import check_openable, connect, rollback

__all__ = ["SQLiteStore"]


class SQLiteStore(Connected):
    """Sessions in one SQLite file (WAL mode, one transaction per append).

    Threads: the connection is opened with sqlite3's default ``check_same_thread=True``, so a
    store must be used from the thread that opened it (sqlite3 raises otherwise, which becomes a
    :class:`StoreError`). Open one store per thread or process instead: WAL lets readers run
    beside a writer, and ``BEGIN IMMEDIATE`` plus a busy timeout serialize the writers.

    The file is created owner-only (0600; SQLite gives the ``-wal`` and ``-shm`` files the same
    mode: they hold conversation text too). Each append is one ``BEGIN IMMEDIATE`` transaction that
    checks the index is next and writes the step. With ``synchronous="FULL"`` (the default) the WAL
    is fsynced at every commit, so an append that has returned survives a process kill and a power
    loss; ``"NORMAL"`` survives a process kill but may lose the latest commits on power loss, and
    is faster. Metadata and usage are stored as JSON (a tuple comes back as a list;
    :class:`MemoryStore` applies the same round trip).

    Schema (``PRAGMA user_version`` = :data:`SCHEMA_VERSION`, ``PRAGMA application_id`` =
    :data:`APPLICATION_ID` marks the file as a contextfold store)::

        sessions(session_id PK, system JSON|NULL, counter, meta JSON, created_at)
        steps(session_id, idx, messages JSON, tokens JSON, hashes JSON, PK(session_id, idx))
        calls(session_id, call_idx, step_idx, messages JSON, usage JSON, created_at,
              PK(session_id, call_idx))
        folds(session_id, fold_idx, record JSON, created_at, PK(session_id, fold_idx))
        replies(session_id, reply_idx, step_idx, message JSON, created_at,
                PK(session_id, reply_idx))
        ledger(entry_idx PK, session_id, unit, arm, step, round_idx, model, api, the billed
               and the direct usage and dollars, sent_tokens, direct_tokens, stop, error,
               created_at)

    An older file is upgraded in place when opened: version 1 (before fold logs) gains the
    ``folds`` table, version 2 (before kept replies) the ``replies`` table, version 3
    (before serve's ledger) the ``ledger`` table; nothing stored changes.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        synchronous: Literal["NORMAL", "FULL"] = "FULL",
        timeout: float = 10.0,
    ) -> None:
        if synchronous not in ("NORMAL", "FULL"):
            raise StoreError(f"synchronous must be 'NORMAL' or 'FULL', got {synchronous!r}")
        self.path = Path(path)
        self.synchronous = synchronous
        check_openable(self.path)
        self._conn: sqlite3.Connection | None = connect(self.path, synchronous, timeout)

    # -- lifecycle (close and the context manager come from Connected)

    def __repr__(self) -> str:
        state = "closed" if self._conn is None else "open"
        return f"SQLiteStore({str(self.path)!r}, synchronous={self.synchronous!r}) [{state}]"

    # -- Store protocol

    def create_session(
        self,
        session_id: str,
        *,
        system: SystemMessage | None,
        counter: str,
        meta: Mapping[str, Any],
    ) -> None:
        system_json, meta_json = session_row(session_id, system, meta)
        with self._transaction(f"create session {session_id!r}") as conn:
            if _session_exists(conn, session_id):
                raise StoreConflictError(f"session {session_id!r} already exists in {self.path}")
            conn.execute(
                "INSERT INTO sessions (session_id, system, counter, meta, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (session_id, system_json, counter, meta_json, now()),
            )

    def append_step(self, session_id: str, step: Step) -> None:
        row = step_row(session_id, step)
        with self._transaction(f"append step {step.index} to session {session_id!r}") as conn:
            self._require_session(conn, session_id)
            expected = _next_index(conn, "steps", "idx", session_id)
            if step.index != expected:
                raise not_next(session_id, step.index, expected)
            conn.execute(
                "INSERT INTO steps (session_id, idx, messages, tokens, hashes)"
                " VALUES (?, ?, ?, ?, ?)",
                row,
            )

    def append_fold(self, session_id: str, record: FoldRecord) -> None:
        where = f"fold record of session {session_id!r}"
        record_json = dumps(record.to_json(), where)
        with self._transaction(f"append a {where}") as conn:
            self._require_session(conn, session_id)
            check_fold(session_id, record, _next_index(conn, "steps", "idx", session_id))
            fold_idx = _next_index(conn, "folds", "fold_idx", session_id)
            conn.execute(
                "INSERT INTO folds (session_id, fold_idx, record, created_at) VALUES (?, ?, ?, ?)",
                (session_id, fold_idx, record_json, now()),
            )

    def load_session(self, session_id: str) -> SessionRecord:
        with self._reading(f"load session {session_id!r}") as conn:
            head = conn.execute(
                "SELECT system, counter, meta FROM sessions WHERE session_id = ?", (session_id,)
            ).fetchone()
            if head is None:
                raise missing(session_id, str(self.path))
            rows = conn.execute(
                "SELECT idx, messages, tokens, hashes FROM steps WHERE session_id = ? ORDER BY idx",
                (session_id,),
            ).fetchall()
            folds = conn.execute(
                "SELECT fold_idx, record FROM folds WHERE session_id = ? ORDER BY fold_idx",
                (session_id,),
            ).fetchall()
        return Decoder(self.path).decode_session(session_id, head, rows, folds)

    def list_sessions(self) -> list[str]:
        with self._reading("list sessions") as conn:
            rows = conn.execute("SELECT session_id FROM sessions").fetchall()
        return sorted(r[0] for r in rows)

    # -- calls (extras for the live agent)

    def record_call(
        self,
        session_id: str,
        *,
        step: int,
        messages: Sequence[Message],
        usage: Mapping[str, int],
    ) -> None:
        """Keep the messages one model call was sent and the usage it reported (one transaction).

        ``step`` is the index of the step the call's reply produces: the session must hold
        exactly ``step`` steps (checked in the write transaction, like an append).
        """
        messages_json, usage_json = call_row(session_id, step, messages, usage)
        where = f"a call in session {session_id!r}"
        with self._transaction(f"record {where}") as conn:
            self._require_session(conn, session_id)
            check_call_at(session_id, step, _next_index(conn, "steps", "idx", session_id))
            call_idx = _next_index(conn, "calls", "call_idx", session_id)
            conn.execute(
                "INSERT INTO calls (session_id, call_idx, step_idx, messages, usage, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (session_id, call_idx, step, messages_json, usage_json, now()),
            )

    def load_calls(self, session_id: str) -> list[dict[str, Any]]:
        """The recorded calls in order: dicts with call, step, messages, usage, created_at."""
        with self._reading(f"load the calls of session {session_id!r}") as conn:
            self._require_session(conn, session_id)
            rows = conn.execute(
                "SELECT call_idx, step_idx, messages, usage, created_at FROM calls"
                " WHERE session_id = ? ORDER BY call_idx",
                (session_id,),
            ).fetchall()
        decoder = Decoder(self.path)
        return [decoder.decode_call(row, session_id) for row in rows]

    def record_reply(self, session_id: str, *, step: int, message: AssistantMessage) -> None:
        """Keep a reply given to the session's first ``step`` steps (one transaction; the
        session must hold exactly ``step`` steps, checked as for a call)."""
        row = reply_row(session_id, step, message)
        with self._transaction(f"record a reply in session {session_id!r}") as conn:
            self._require_session(conn, session_id)
            check_call_at(session_id, step, _next_index(conn, "steps", "idx", session_id))
            reply_idx = _next_index(conn, "replies", "reply_idx", session_id)
            conn.execute(
                "INSERT INTO replies (session_id, reply_idx, step_idx, message, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (session_id, reply_idx, step, row, now()),
            )

    def load_replies(self, session_id: str, *, step: int) -> list[AssistantMessage]:
        """The replies kept for the session's first ``step`` steps, the latest first."""
        with self._reading(f"load the replies of session {session_id!r}") as conn:
            self._require_session(conn, session_id)
            rows = conn.execute(
                "SELECT reply_idx, message FROM replies WHERE session_id = ? AND step_idx = ?"
                " ORDER BY reply_idx DESC",
                (session_id, step),
            ).fetchall()
        decoder = Decoder(self.path)
        return [decoder.decode_reply(m, f"session {session_id!r}, reply {i}") for i, m in rows]

    # -- the ledger (contextfold serve's bill)

    def record_ledger(self, entry: LedgerEntry) -> None:
        """Keep one upstream call's entry (one transaction)."""
        with self._transaction("record a ledger entry") as conn:
            conn.execute(LEDGER_INSERT["sqlite"], stamped(entry).row())

    def load_ledger(self) -> list[LedgerEntry]:
        """Every entry, in the order the calls were made."""
        with self._reading("load the ledger") as conn:
            rows = conn.execute(LEDGER_SELECT).fetchall()
        return decode_ledger(rows, str(self.path))

    def verify(self) -> None:
        """Raise :class:`StoreError` when SQLite finds the file damaged (``PRAGMA
        quick_check``: every page and index, not the JSON inside the rows)."""
        try:
            rows = self._db().execute("PRAGMA quick_check").fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path} is corrupt: {exc}; restore a copy") from exc
        if rows != [("ok",)]:
            problem = str(rows[0][0]).replace("\n", " ")
            raise StoreError(f"{self.path} is corrupt: SQLite finds {problem}; restore a copy")

    # -- connection and transactions

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"the store {self.path} is closed; open a new SQLiteStore")
        return self._conn

    @contextmanager
    def _reading(self, what: str) -> Iterator[sqlite3.Connection]:
        """Run reads, turning sqlite errors into a StoreError naming the file."""
        conn = self._db()
        try:
            yield conn
        except (sqlite3.Error, UnicodeError) as exc:
            raise self._failed(what, exc) from exc

    @contextmanager
    def _transaction(self, what: str) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction: committed on success, rolled back on any error."""
        conn = self._db()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise self._failed(what, exc) from exc
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException as exc:
            rollback(conn)
            if isinstance(exc, sqlite3.Error | UnicodeError):
                raise self._failed(what, exc) from exc
            raise

    def _failed(self, what: str, exc: Exception) -> StoreError:
        hint = ""
        if isinstance(exc, sqlite3.DatabaseError) and "malformed" in str(exc):
            hint = "; the file is corrupt: check it with PRAGMA integrity_check or restore a copy"
        elif isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
            hint = "; another process holds the write lock: retry, or use one writer per file"
        return StoreError(f"{self.path}: could not {what}: {exc}{hint}")

    def _require_session(self, conn: sqlite3.Connection, session_id: str) -> None:
        if not _session_exists(conn, session_id):
            raise missing(session_id, str(self.path))


def _session_exists(conn: sqlite3.Connection, session_id: str) -> bool:
    row = conn.execute("SELECT 1 FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
    return row is not None


def _next_index(conn: sqlite3.Connection, table: str, column: str, session_id: str) -> int:
    """The next index of a session in a table (indices are contiguous from 0)."""
    row = conn.execute(
        f"SELECT COALESCE(MAX({column}) + 1, 0) FROM {table} WHERE session_id = ?", (session_id,)
    ).fetchone()
    return int(row[0])
