"""Opening a :class:`SQLiteStore` file: path checks, connection, pragmas and schema."""

from __future__ import annotations

import os
import sqlite3
from contextlib import suppress
from pathlib import Path

from contextfold.core.errors import StoreError
from contextfold.core.store._ledger import ledger_schema
from contextfold.core.store._tables import session_tables

SCHEMA_VERSION = 4
"""Version of the SQLite schema, kept in ``PRAGMA user_version``."""

APPLICATION_ID = 0x43464C44
"""``PRAGMA application_id`` of a contextfold store ("CFLD")."""

_SCHEMA = session_tables(step_count=False) + ledger_schema("sqlite")

_UPGRADES = {
    # tables are only added; nothing stored changes
    1: _SCHEMA[_SCHEMA.index("CREATE TABLE folds") : _SCHEMA.index("CREATE TABLE replies")],
    2: _SCHEMA[_SCHEMA.index("CREATE TABLE replies") : _SCHEMA.index("CREATE TABLE ledger")],
    3: _SCHEMA[_SCHEMA.index("CREATE TABLE ledger") :],  # serve's ledger of upstream calls
}


def check_openable(path: Path) -> None:
    if path.is_dir():
        raise StoreError(f"cannot open store {path}: it is a directory; give a file path")
    if not path.parent.is_dir():
        raise StoreError(
            f"cannot open store {path}: directory {path.parent} does not exist; create it first"
        )


def create_private(path: Path) -> None:
    """Create ``path`` readable and writable by its owner only (0600) unless it exists; SQLite
    gives the ``-wal`` and ``-shm`` files it makes beside it the same mode."""
    try:
        os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        return
    except OSError as exc:
        raise StoreError(f"cannot create store {path}: {exc.strerror}") from exc


def connect(path: Path, synchronous: str, timeout: float) -> sqlite3.Connection:
    if str(path) == ":memory:":  # SQLite's in-memory name: never a file made in the cwd
        raise StoreError(
            "cannot open store ':memory:': a SQLite store is a file; for an in-memory store "
            "use MemoryStore"
        )
    create_private(path)
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
        if isinstance(exc, sqlite3.OperationalError):
            raise StoreError(_cannot_write(path, exc)) from exc
        if isinstance(exc, sqlite3.DatabaseError):
            raise StoreError(
                f"cannot open store {path}: {exc}; it is not a contextfold store (or it is "
                "corrupt): give the path of a new file or of an existing store"
            ) from exc
        if isinstance(exc, sqlite3.Error):
            raise StoreError(f"cannot open store {path}: {exc}") from exc
        raise
    return conn


def _cannot_write(path: Path, exc: sqlite3.OperationalError) -> str:
    """What to tell about a store SQLite cannot write to or beside (not a corrupt file)."""
    head = f"cannot open store {path}: SQLite says {exc!s}"
    sidecars = f"{path.name}-wal and {path.name}-shm"
    if not os.access(path.parent, os.W_OK):
        return (
            f"{head}: the directory {path.parent} is read-only, and SQLite in WAL mode must "
            f"create {sidecars} beside the store; the store itself is not reported corrupt: "
            "copy it to a writable directory (or make the directory writable) and open the copy"
        )
    if path.exists() and not os.access(path, os.W_OK):
        return f"{head}: the file is read-only; make it writable or open a writable copy"
    return (
        f"{head}: SQLite could not write the file or {sidecars} beside it (check that they are "
        "regular files you may write, and that the disk has room); the store itself is not "
        "reported corrupt"
    )


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
            _upgrade(conn, version)
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise


def _upgrade(conn: sqlite3.Connection, version: int) -> None:
    """Bring an older store up to :data:`SCHEMA_VERSION`, in the open transaction."""
    while version < SCHEMA_VERSION:
        for statement in _UPGRADES[version].split(";"):
            if statement.strip():
                conn.execute(statement)
        version += 1
        conn.execute(f"PRAGMA user_version = {version}")


def _check_version(path: Path, app_id: int, version: int) -> None:
    if app_id != APPLICATION_ID:
        raise StoreError(
            f"cannot open store {path}: it is an SQLite database but not a contextfold store; "
            "give the path of a new file or of an existing store"
        )
    if version not in _UPGRADES and version != SCHEMA_VERSION:
        newer = "a newer" if version > SCHEMA_VERSION else "an unknown"
        raise StoreError(
            f"cannot open store {path}: it has {newer} schema version {version} (this contextfold "
            f"reads version {SCHEMA_VERSION}); upgrade contextfold"
        )


def rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        # sqlite may already have rolled the transaction back itself (disk full, I/O error)
        with suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
