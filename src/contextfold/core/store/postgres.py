"""The PostgreSQL session store, :class:`PostgresStore` (psycopg 3), for processes that share
sessions: replicas of ``contextfold serve`` behind one load balancer."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

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
from contextfold.core.store._postgres_open import connect, display_url, import_psycopg

__all__ = ["PostgresStore"]

Cursor = Any  # psycopg.Connection; psycopg is imported lazily (an optional extra)


class PostgresStore(Connected):
    """Sessions in a PostgreSQL database (one transaction per append, like :class:`SQLiteStore`).

    Every write locks its session's row (``SELECT ... FOR UPDATE``) and checks the index is
    next inside the same transaction, so appends to one session from any number of processes
    are serialised by the database: one wins, the other gets a :class:`StoreError` and nothing
    of it is written. Reads run in one ``REPEATABLE READ`` snapshot. A lock serialises use of
    the connection between threads; the URL's password never appears in messages.

    The tables and guarantees are :class:`SQLiteStore`'s; the schema adds a ``steps`` count to
    ``sessions`` and a ``contextfold_schema`` version table.
    """

    def __init__(self, url: str, *, timeout: float = 10.0) -> None:
        self.url = url
        self.name = display_url(url)
        self._psycopg = import_psycopg()
        self._lock = threading.Lock()
        self._conn: Any = connect(url, self.name, timeout)

    # -- lifecycle (close and the context manager come from Connected)

    def __repr__(self) -> str:
        state = "closed" if self._conn is None else "open"
        return f"PostgresStore({self.name!r}) [{state}]"

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
        with self._transaction(f"create session {session_id!r}") as db:
            created = db.execute(
                "INSERT INTO sessions (session_id, system, counter, meta, created_at)"
                " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (session_id) DO NOTHING",
                (session_id, system_json, counter, meta_json, now()),
            ).rowcount
            if created != 1:
                raise StoreConflictError(f"session {session_id!r} already exists in {self.name}")

    def append_step(self, session_id: str, step: Step) -> None:
        row = step_row(session_id, step)
        with self._transaction(f"append step {step.index} to session {session_id!r}") as db:
            expected = self._lock_session(db, session_id)
            if step.index != expected:
                raise not_next(session_id, step.index, expected)
            db.execute(
                "INSERT INTO steps (session_id, idx, messages, tokens, hashes)"
                " VALUES (%s, %s, %s, %s, %s)",
                row,
            )
            db.execute(
                "UPDATE sessions SET steps = %s WHERE session_id = %s", (expected + 1, session_id)
            )

    def append_fold(self, session_id: str, record: FoldRecord) -> None:
        where = f"fold record of session {session_id!r}"
        record_json = dumps(record.to_json(), where)
        with self._transaction(f"append a {where}") as db:
            check_fold(session_id, record, self._lock_session(db, session_id))
            db.execute(
                "INSERT INTO folds (session_id, fold_idx, record, created_at) VALUES (%s, "
                "(SELECT COALESCE(MAX(fold_idx) + 1, 0) FROM folds WHERE session_id = %s), %s, %s)",
                (session_id, session_id, record_json, now()),
            )

    def load_session(self, session_id: str) -> SessionRecord:
        with self._snapshot(f"load session {session_id!r}") as db:
            head = db.execute(
                "SELECT system, counter, meta FROM sessions WHERE session_id = %s", (session_id,)
            ).fetchone()
            if head is None:
                raise missing(session_id, self.name)
            rows = db.execute(
                "SELECT idx, messages, tokens, hashes FROM steps WHERE session_id = %s"
                " ORDER BY idx",
                (session_id,),
            ).fetchall()
            folds = db.execute(
                "SELECT fold_idx, record FROM folds WHERE session_id = %s ORDER BY fold_idx",
                (session_id,),
            ).fetchall()
        return Decoder(self.name).decode_session(session_id, head, rows, folds)

    def list_sessions(self) -> list[str]:
        return sorted(self.step_counts())

    def step_counts(self) -> dict[str, int]:
        """How many steps every session holds now (one query: what replicas poll)."""
        with self._snapshot("count the steps of the sessions") as db:
            rows = db.execute("SELECT session_id, steps FROM sessions").fetchall()
        return {sid: int(n) for sid, n in rows}

    # -- calls

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
        exactly ``step`` steps, checked under the row lock like an append, so a call whose
        session another process extended meanwhile raises :class:`StoreConflictError`.
        """
        messages_json, usage_json = call_row(session_id, step, messages, usage)
        where = f"a call in session {session_id!r}"
        with self._transaction(f"record {where}") as db:
            check_call_at(session_id, step, self._lock_session(db, session_id))
            db.execute(
                "INSERT INTO calls (session_id, call_idx, step_idx, messages, usage, created_at)"
                " VALUES (%s, (SELECT COALESCE(MAX(call_idx) + 1, 0) FROM calls"
                " WHERE session_id = %s), %s, %s, %s, %s)",
                (session_id, session_id, step, messages_json, usage_json, now()),
            )

    def load_calls(self, session_id: str) -> list[dict[str, Any]]:
        """The recorded calls in order: dicts with call, step, messages, usage, created_at."""
        with self._snapshot(f"load the calls of session {session_id!r}") as db:
            found = db.execute("SELECT 1 FROM sessions WHERE session_id = %s", (session_id,))
            if found.fetchone() is None:
                raise missing(session_id, self.name)
            rows = db.execute(
                "SELECT call_idx, step_idx, messages, usage, created_at FROM calls"
                " WHERE session_id = %s ORDER BY call_idx",
                (session_id,),
            ).fetchall()
        decoder = Decoder(self.name)
        return [decoder.decode_call(row, session_id) for row in rows]

    # -- replies

    def record_reply(self, session_id: str, *, step: int, message: AssistantMessage) -> None:
        """Keep a reply given to the session's first ``step`` steps (one transaction; the
        session must hold exactly ``step`` steps, checked under its row lock)."""
        row = reply_row(session_id, step, message)
        with self._transaction(f"record a reply in session {session_id!r}") as db:
            check_call_at(session_id, step, self._lock_session(db, session_id))
            db.execute(
                "INSERT INTO replies (session_id, reply_idx, step_idx, message, created_at)"
                " VALUES (%s, (SELECT COALESCE(MAX(reply_idx) + 1, 0) FROM replies"
                " WHERE session_id = %s), %s, %s, %s)",
                (session_id, session_id, step, row, now()),
            )

    def load_replies(self, session_id: str, *, step: int) -> list[AssistantMessage]:
        """The replies kept for the session's first ``step`` steps, the latest first."""
        with self._snapshot(f"load the replies of session {session_id!r}") as db:
            found = db.execute("SELECT 1 FROM sessions WHERE session_id = %s", (session_id,))
            if found.fetchone() is None:
                raise missing(session_id, self.name)
            rows = db.execute(
                "SELECT reply_idx, message FROM replies WHERE session_id = %s AND step_idx = %s"
                " ORDER BY reply_idx DESC",
                (session_id, step),
            ).fetchall()
        decoder = Decoder(self.name)
        return [decoder.decode_reply(m, f"session {session_id!r}, reply {i}") for i, m in rows]

    # -- the ledger (contextfold serve's bill)

    def record_ledger(self, entry: LedgerEntry) -> None:
        """Keep one upstream call's entry (one transaction; replicas write theirs beside)."""
        with self._transaction("record a ledger entry") as db:
            db.execute(LEDGER_INSERT["postgres"], stamped(entry).row())

    def load_ledger(self) -> list[LedgerEntry]:
        """Every entry, in the order they were written."""
        with self._snapshot("load the ledger") as db:
            rows = db.execute(LEDGER_SELECT).fetchall()
        return decode_ledger(rows, self.name)

    # -- connection and transactions

    def _lock_session(self, db: Cursor, session_id: str) -> int:
        """Lock the session's row until the transaction ends; its step count (next index)."""
        row = db.execute(
            "SELECT steps FROM sessions WHERE session_id = %s FOR UPDATE", (session_id,)
        ).fetchone()
        if row is None:
            raise missing(session_id, self.name)
        return int(row[0])

    @contextmanager
    def _transaction(self, what: str) -> Iterator[Cursor]:
        """One transaction: committed on success, rolled back on any error."""
        with self._lock:
            db = self._db()
            try:
                with db.transaction():
                    yield db
            except (self._psycopg.Error, UnicodeError) as exc:
                raise self._failed(what, exc) from exc

    @contextmanager
    def _snapshot(self, what: str) -> Iterator[Cursor]:
        """Reads in one read-only ``REPEATABLE READ`` snapshot."""
        with self._transaction(what) as db:
            db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            yield db

    def _db(self) -> Cursor:
        if self._conn is None:
            raise StoreError(f"the store {self.name} is closed; open a new PostgresStore")
        return self._conn

    def _failed(self, what: str, exc: Exception) -> StoreError:
        hint = ""
        if isinstance(exc, self._psycopg.OperationalError):
            hint = "; the connection to the server failed: check that it runs, then reopen"
        return StoreError(f"{self.name}: could not {what}: {str(exc).strip()}{hint}")
