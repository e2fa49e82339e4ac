"""Session stores: :class:`MemoryStore` (in memory) and :class:`SQLiteStore` (one SQLite file).

Both implement the :class:`~contextfold.core.protocols.Store` protocol and two extras used by the
live agent, :meth:`~SQLiteStore.record_call` and :meth:`~SQLiteStore.load_calls`, which keep the
exact messages each model call was sent and the usage it reported.

Messages are stored as the OpenAI dicts :func:`~contextfold.core.messages.to_openai` writes and
read back with :func:`~contextfold.core.messages.from_openai`, so a loaded step equals the one
appended (messages, token counts, hashes, index). Metadata and usage are stored as JSON: they
must be JSON-serializable and come back as JSON values (a tuple comes back as a list);
:class:`MemoryStore` applies the same round trip so the two stores behave alike.

:class:`SQLiteStore` durability: the database runs in WAL mode; each append is one
``BEGIN IMMEDIATE`` transaction that checks the index is next and writes the step. With
``synchronous="FULL"`` (the default) the WAL is fsynced at every commit, so an append that has
returned survives a process kill and a power loss; ``"NORMAL"`` survives a process kill but may
lose the latest commits on power loss, and is faster.

Schema (``PRAGMA user_version`` = :data:`SCHEMA_VERSION`, ``PRAGMA application_id`` marks the
file as a contextfold store)::

    sessions(session_id PK, system JSON|NULL, counter, meta JSON, created_at)
    steps(session_id, idx, messages JSON, tokens JSON, hashes JSON, PK(session_id, idx))
    calls(session_id, call_idx, step_idx, messages JSON, usage JSON, created_at,
          PK(session_id, call_idx))
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from contextfold.core.errors import MessageFormatError, StoreError
from contextfold.core.history import Step
from contextfold.core.messages import Message, SystemMessage, from_openai, to_openai
from contextfold.core.protocols import SessionRecord

__all__ = ["SCHEMA_VERSION", "MemoryStore", "SQLiteStore"]

SCHEMA_VERSION = 1
"""Version of the SQLite schema, kept in ``PRAGMA user_version``."""

APPLICATION_ID = 0x43464C44
"""``PRAGMA application_id`` of a contextfold store ("CFLD")."""

_SCHEMA = """
CREATE TABLE sessions (
    session_id TEXT PRIMARY KEY NOT NULL,
    system     TEXT,
    counter    TEXT NOT NULL,
    meta       TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE steps (
    session_id TEXT NOT NULL REFERENCES sessions (session_id),
    idx        INTEGER NOT NULL CHECK (idx >= 0),
    messages   TEXT NOT NULL,
    tokens     TEXT NOT NULL,
    hashes     TEXT NOT NULL,
    PRIMARY KEY (session_id, idx)
);
CREATE TABLE calls (
    session_id TEXT NOT NULL REFERENCES sessions (session_id),
    call_idx   INTEGER NOT NULL CHECK (call_idx >= 0),
    step_idx   INTEGER NOT NULL CHECK (step_idx >= 0),
    messages   TEXT NOT NULL,
    usage      TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (session_id, call_idx)
);
"""


# --- shared helpers -------------------------------------------------------------------------


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _dumps(value: Any, what: str) -> str:
    """Compact JSON; non-ASCII kept as is unless the text holds lone surrogates (then escaped)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"{what} is not JSON-serializable: {exc}") from exc
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":"), allow_nan=False)
    return text


def _json_copy(value: Mapping[str, Any], what: str) -> dict[str, Any]:
    """The value as it comes back from storage (what :class:`MemoryStore` keeps)."""
    copied: dict[str, Any] = json.loads(_dumps(dict(value), what))
    return copied


def _check_step(session_id: str, step: Step) -> None:
    n = len(step.messages)
    if n == 0 or len(step.tokens) != n or len(step.hashes) != n:
        raise StoreError(
            f"session {session_id!r}: step {step.index} has {n} messages, {len(step.tokens)} "
            f"token counts and {len(step.hashes)} hashes; build steps with make_step"
        )


def _check_call_step(session_id: str, step: int) -> None:
    if step < 0:
        raise StoreError(f"session {session_id!r}: a call's step index must be >= 0, got {step}")


def _call_record(
    call_idx: int, step: int, messages: list[Message], usage: dict[str, Any], created_at: str
) -> dict[str, Any]:
    return {
        "call": call_idx,
        "step": step,
        "messages": messages,
        "usage": usage,
        "created_at": created_at,
    }


def _missing(session_id: str, where: str) -> StoreError:
    return StoreError(f"session {session_id!r} does not exist in {where}")


def _not_next(session_id: str, index: int, expected: int) -> StoreError:
    return StoreError(
        f"session {session_id!r}: step index {index} is not the next index {expected}; "
        "nothing was written"
    )


# --- MemoryStore ----------------------------------------------------------------------------


@dataclass(slots=True)
class _MemorySession:
    system: SystemMessage | None
    counter: str
    meta: dict[str, Any]
    steps: list[Step]
    calls: list[dict[str, Any]]


class MemoryStore:
    """Sessions in a dict: for replay, benchmarks and tests. Nothing survives the process."""

    def __init__(self) -> None:
        self._sessions: dict[str, _MemorySession] = {}

    def create_session(
        self,
        session_id: str,
        *,
        system: SystemMessage | None,
        counter: str,
        meta: Mapping[str, Any],
    ) -> None:
        if session_id in self._sessions:
            raise StoreError(f"session {session_id!r} already exists in the memory store")
        copied = _json_copy(meta, f"metadata of session {session_id!r}")
        self._sessions[session_id] = _MemorySession(system, counter, copied, [], [])

    def append_step(self, session_id: str, step: Step) -> None:
        session = self._get(session_id)
        _check_step(session_id, step)
        if step.index != len(session.steps):
            raise _not_next(session_id, step.index, len(session.steps))
        session.steps.append(step)

    def load_session(self, session_id: str) -> SessionRecord:
        session = self._get(session_id)
        return SessionRecord(
            session_id=session_id,
            system=session.system,
            counter=session.counter,
            steps=list(session.steps),
            meta=_json_copy(session.meta, "metadata"),
        )

    def list_sessions(self) -> list[str]:
        return sorted(self._sessions)

    def record_call(
        self,
        session_id: str,
        *,
        step: int,
        messages: Sequence[Message],
        usage: Mapping[str, int],
    ) -> None:
        """Keep the messages one model call was sent and the usage it reported."""
        session = self._get(session_id)
        _check_call_step(session_id, step)
        copied = _json_copy(usage, f"usage of a call in session {session_id!r}")
        record = _call_record(len(session.calls), step, list(messages), copied, _now())
        session.calls.append(record)

    def load_calls(self, session_id: str) -> list[dict[str, Any]]:
        """The recorded calls in order: dicts with call, step, messages, usage, created_at."""
        session = self._get(session_id)
        return [
            {**c, "messages": list(c["messages"]), "usage": dict(c["usage"])} for c in session.calls
        ]

    def close(self) -> None:
        """Nothing to release (for symmetry with :class:`SQLiteStore`)."""

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _get(self, session_id: str) -> _MemorySession:
        session = self._sessions.get(session_id)
        if session is None:
            raise _missing(session_id, "the memory store")
        return session


# --- SQLiteStore ----------------------------------------------------------------------------


class SQLiteStore:
    """Sessions in one SQLite file (WAL mode, one transaction per append).

    Threads: the connection is opened with sqlite3's default ``check_same_thread=True``, so a
    store must be used from the thread that opened it (sqlite3 raises otherwise, which becomes a
    :class:`StoreError`). Open one store per thread or process instead: WAL lets readers run
    beside a writer, and ``BEGIN IMMEDIATE`` plus a busy timeout serialize the writers.
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
        _check_openable(self.path)
        self._conn: sqlite3.Connection | None = _connect(self.path, synchronous, timeout)

    # -- lifecycle

    def close(self) -> None:
        """Close the connection (idempotent); later calls raise :class:`StoreError`."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

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
        system_json = None if system is None else _dumps(to_openai(system), "system message")
        meta_json = _dumps(dict(meta), f"metadata of session {session_id!r}")
        with self._transaction(f"create session {session_id!r}") as conn:
            if _session_exists(conn, session_id):
                raise StoreError(f"session {session_id!r} already exists in {self.path}")
            conn.execute(
                "INSERT INTO sessions (session_id, system, counter, meta, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (session_id, system_json, counter, meta_json, _now()),
            )

    def append_step(self, session_id: str, step: Step) -> None:
        _check_step(session_id, step)
        row = (
            session_id,
            step.index,
            _dumps([to_openai(m) for m in step.messages], f"step {step.index}"),
            _dumps(list(step.tokens), f"token counts of step {step.index}"),
            _dumps(list(step.hashes), f"hashes of step {step.index}"),
        )
        with self._transaction(f"append step {step.index} to session {session_id!r}") as conn:
            self._require_session(conn, session_id)
            expected = _next_index(conn, "steps", "idx", session_id)
            if step.index != expected:
                raise _not_next(session_id, step.index, expected)
            conn.execute(
                "INSERT INTO steps (session_id, idx, messages, tokens, hashes)"
                " VALUES (?, ?, ?, ?, ?)",
                row,
            )

    def load_session(self, session_id: str) -> SessionRecord:
        with self._reading(f"load session {session_id!r}") as conn:
            head = conn.execute(
                "SELECT system, counter, meta FROM sessions WHERE session_id = ?", (session_id,)
            ).fetchone()
            if head is None:
                raise _missing(session_id, str(self.path))
            rows = conn.execute(
                "SELECT idx, messages, tokens, hashes FROM steps WHERE session_id = ? ORDER BY idx",
                (session_id,),
            ).fetchall()
        system_json, counter, meta_json = head
        where = f"session {session_id!r}"
        return SessionRecord(
            session_id=session_id,
            system=self._decode_system(system_json, where),
            counter=counter,
            steps=self._decode_steps(rows, session_id),
            meta=self._decode_object(meta_json, f"{where}: metadata"),
        )

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

        ``step`` is the index of the step the call produced (it may not be appended yet).
        """
        _check_call_step(session_id, step)
        where = f"a call in session {session_id!r}"
        messages_json = _dumps([to_openai(m) for m in messages], f"messages of {where}")
        usage_json = _dumps(dict(usage), f"usage of {where}")
        with self._transaction(f"record {where}") as conn:
            self._require_session(conn, session_id)
            call_idx = _next_index(conn, "calls", "call_idx", session_id)
            conn.execute(
                "INSERT INTO calls (session_id, call_idx, step_idx, messages, usage, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (session_id, call_idx, step, messages_json, usage_json, _now()),
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
        return [self._decode_call(row, session_id) for row in rows]

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
            _rollback(conn)
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
            raise _missing(session_id, str(self.path))

    # -- decoding

    def _corrupt(self, where: str, problem: str) -> StoreError:
        return StoreError(
            f"{self.path} is corrupt: {where}: {problem} "
            "(the file was changed outside contextfold; restore a copy)"
        )

    def _decode_json(self, text: Any, where: str) -> Any:
        if not isinstance(text, str):
            raise self._corrupt(where, f"expected JSON text, found {type(text).__name__}")
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise self._corrupt(where, f"invalid JSON ({exc})") from exc

    def _decode_object(self, text: Any, where: str) -> dict[str, Any]:
        value = self._decode_json(text, where)
        if not isinstance(value, dict):
            raise self._corrupt(where, "expected a JSON object")
        return value

    def _decode_messages(self, text: Any, where: str) -> list[Message]:
        value = self._decode_json(text, where)
        if not isinstance(value, list):
            raise self._corrupt(where, "expected a JSON list of messages")
        try:
            return [from_openai(m) for m in value]
        except MessageFormatError as exc:
            raise self._corrupt(where, str(exc)) from exc

    def _decode_system(self, text: Any, where: str) -> SystemMessage | None:
        if text is None:
            return None
        value = self._decode_json(text, f"{where}: system message")
        try:
            message = from_openai(value)
        except MessageFormatError as exc:
            raise self._corrupt(f"{where}: system message", str(exc)) from exc
        if not isinstance(message, SystemMessage):
            raise self._corrupt(where, f"the system message has role {message.role!r}")
        return message

    def _decode_steps(self, rows: list[tuple[Any, ...]], session_id: str) -> list[Step]:
        steps = [self._decode_step(row, session_id) for row in rows]
        for position, step in enumerate(steps):
            if step.index != position:
                where = f"session {session_id!r}"
                raise self._corrupt(where, f"step {position} is missing (next is {step.index})")
        return steps

    def _decode_step(self, row: tuple[Any, ...], session_id: str) -> Step:
        idx, messages_json, tokens_json, hashes_json = row
        where = f"session {session_id!r}, step {idx}"
        messages = self._decode_messages(messages_json, where)
        tokens = self._decode_json(tokens_json, f"{where}: tokens")
        hashes = self._decode_json(hashes_json, f"{where}: hashes")
        self._check_columns(where, messages, tokens, hashes)
        return Step(index=idx, messages=tuple(messages), tokens=tuple(tokens), hashes=tuple(hashes))

    def _check_columns(self, where: str, messages: list[Message], tokens: Any, hashes: Any) -> None:
        n = len(messages)
        if not (isinstance(tokens, list) and len(tokens) == n and _all_ints(tokens)):
            raise self._corrupt(where, f"expected {n} integer token counts")
        if not (isinstance(hashes, list) and len(hashes) == n and _all_strs(hashes)):
            raise self._corrupt(where, f"expected {n} string hashes")

    def _decode_call(self, row: tuple[Any, ...], session_id: str) -> dict[str, Any]:
        call_idx, step_idx, messages_json, usage_json, created_at = row
        where = f"session {session_id!r}, call {call_idx}"
        messages = self._decode_messages(messages_json, where)
        usage = self._decode_object(usage_json, f"{where}: usage")
        return _call_record(call_idx, step_idx, messages, usage, created_at)


# --- SQLite helpers -------------------------------------------------------------------------


def _check_openable(path: Path) -> None:
    if path.is_dir():
        raise StoreError(f"cannot open store {path}: it is a directory; give a file path")
    if not path.parent.is_dir():
        raise StoreError(
            f"cannot open store {path}: directory {path.parent} does not exist; create it first"
        )


def _connect(path: Path, synchronous: str, timeout: float) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(path, timeout=timeout, isolation_level=None)
    except sqlite3.Error as exc:
        raise StoreError(
            f"cannot open store {path}: {exc}; check the path and permissions"
        ) from exc
    try:
        _configure(conn, path, synchronous)
        _ensure_schema(conn, path)
    except BaseException as exc:
        conn.close()
        if isinstance(exc, sqlite3.DatabaseError):
            raise StoreError(
                f"cannot open store {path}: {exc}; it is not a contextfold store (or it is "
                "corrupt): give the path of a new file or of an existing store"
            ) from exc
        if isinstance(exc, sqlite3.Error):
            raise StoreError(f"cannot open store {path}: {exc}") from exc
        raise
    return conn


def _configure(conn: sqlite3.Connection, path: Path, synchronous: str) -> None:
    conn.execute("PRAGMA foreign_keys = ON")
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        raise StoreError(
            f"cannot open store {path}: SQLite refused WAL mode (journal_mode is {mode!r}); "
            "use a file on a local disk (for an in-memory store use MemoryStore)"
        )
    conn.execute(f"PRAGMA synchronous = {synchronous}")


def _ensure_schema(conn: sqlite3.Connection, path: Path) -> None:
    """Create the schema in a new file, or check an existing file is a store of this version."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        objects = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if app_id == 0 and version == 0 and objects == 0:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        else:
            _check_version(path, app_id, version)
        conn.execute("COMMIT")
    except BaseException:
        _rollback(conn)
        raise


def _check_version(path: Path, app_id: int, version: int) -> None:
    if app_id != APPLICATION_ID:
        raise StoreError(
            f"cannot open store {path}: it is an SQLite database but not a contextfold store; "
            "give the path of a new file or of an existing store"
        )
    if version != SCHEMA_VERSION:
        newer = "a newer" if version > SCHEMA_VERSION else "an unknown"
        raise StoreError(
            f"cannot open store {path}: it has {newer} schema version {version} (this contextfold "
            f"reads version {SCHEMA_VERSION}); upgrade contextfold"
        )


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        # sqlite may already have rolled the transaction back itself (disk full, I/O error)
        with suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


def _session_exists(conn: sqlite3.Connection, session_id: str) -> bool:
    row = conn.execute("SELECT 1 FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
    return row is not None


def _next_index(conn: sqlite3.Connection, table: str, column: str, session_id: str) -> int:
    """The next index of a session in a table (indices are contiguous from 0)."""
    row = conn.execute(
        f"SELECT COALESCE(MAX({column}) + 1, 0) FROM {table} WHERE session_id = ?", (session_id,)
    ).fetchone()
    return int(row[0])


def _all_ints(values: list[Any]) -> bool:
    return all(isinstance(v, int) and not isinstance(v, bool) for v in values)


def _all_strs(values: list[Any]) -> bool:
    return all(isinstance(v, str) for v in values)
