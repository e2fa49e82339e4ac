"""Opening a :class:`PostgresStore`: URL checks, connection, schema (under an advisory lock)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contextfold.core.errors import StoreError
from contextfold.core.store._ledger import ledger_schema
from contextfold.core.store._tables import session_tables

if TYPE_CHECKING:
    import psycopg

POSTGRES_SCHEMA_VERSION = 3
"""Version of the PostgreSQL schema, kept in the ``contextfold_schema`` table."""

_LOCK_KEY = 0x43464C44  # pg_advisory_xact_lock key: replicas starting together create it once

_SCHEMA = (
    "\nCREATE TABLE contextfold_schema (version INTEGER NOT NULL);"
    + session_tables(step_count=True)
    + ledger_schema("postgres")
)

_UPGRADES = {
    1: _SCHEMA[_SCHEMA.index("CREATE TABLE replies") : _SCHEMA.index("CREATE TABLE ledger")],
    2: _SCHEMA[_SCHEMA.index("CREATE TABLE ledger") :],  # serve's ledger of upstream calls
}
"""From an older version: the statements that bring it one version up (tables only added)."""

URL_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(target: object) -> bool:
    """Whether a store argument is a PostgreSQL URL rather than a file path."""
    return isinstance(target, str) and target.startswith(URL_SCHEMES)


def display_url(url: str) -> str:
    """The URL without its password, for messages and logs."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        parts = conninfo_to_dict(url)
    except Exception:  # a URL psycopg cannot parse is shown by its scheme only
        return url.split("://", 1)[0] + "://..."
    user = f"{parts['user']}@" if parts.get("user") else ""
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{parts.get('host', '')}{port}/{parts.get('dbname', '')}"


def import_psycopg() -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise StoreError(
            "a postgresql:// store needs psycopg 3: pip install 'contextfold[cluster]'"
        ) from exc
    return psycopg


def connect(url: str, name: str, timeout: float) -> psycopg.Connection[Any]:
    """An autocommit connection with the schema created or checked."""
    pg = import_psycopg()
    try:
        conn: psycopg.Connection[Any] = pg.connect(
            url, autocommit=True, connect_timeout=max(1, round(timeout))
        )
    except pg.ProgrammingError as exc:
        raise StoreError(f"invalid store URL {name}: {exc}") from exc
    except pg.Error as exc:
        raise StoreError(
            f"cannot connect to the store {name}: {_first_line(exc)}; check that the PostgreSQL "
            "server runs and that the URL's host, port, user, password and database are right"
        ) from exc
    try:
        _ensure_schema(conn, name)
    except BaseException as exc:
        conn.close()
        if isinstance(exc, pg.Error):
            raise StoreError(f"cannot open store {name}: {_first_line(exc)}") from exc
        raise
    return conn


def _ensure_schema(conn: psycopg.Connection[Any], name: str) -> None:
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        tables = {
            row[0]
            for row in conn.execute(
                "SELECT table_name FROM information_schema.tables"
                " WHERE table_schema = current_schema()"
            )
        }
        if "contextfold_schema" not in tables:
            if tables & {"sessions", "steps", "calls", "folds", "replies", "ledger"}:
                raise StoreError(
                    f"cannot open store {name}: the database has tables named like a "
                    "contextfold store's but is not one; give an empty database"
                )
            for statement in filter(str.strip, _SCHEMA.split(";")):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO contextfold_schema (version) VALUES (%s)", (POSTGRES_SCHEMA_VERSION,)
            )
            return
        row = conn.execute("SELECT max(version) FROM contextfold_schema").fetchone()
        version = row[0] if row else None
        while version in _UPGRADES:
            for statement in filter(str.strip, _UPGRADES[version].split(";")):
                conn.execute(statement)
            version += 1
            conn.execute("INSERT INTO contextfold_schema (version) VALUES (%s)", (version,))
        if version != POSTGRES_SCHEMA_VERSION:
            raise StoreError(
                f"cannot open store {name}: it has schema version {version} (this contextfold "
                f"reads version {POSTGRES_SCHEMA_VERSION}); use a matching contextfold"
            )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
