"""Session stores: :class:`MemoryStore` (in memory), :class:`SQLiteStore` (one SQLite file) and
:class:`PostgresStore` (a PostgreSQL database that several processes share).

Both implement the :class:`~contextfold.core.protocols.Store` protocol: sessions, their steps,
their fold logs (:meth:`~SQLiteStore.append_fold`), and the call log
(:meth:`~SQLiteStore.record_call`, :meth:`~SQLiteStore.load_calls`), which keeps the exact
messages each model call was sent and the usage it reported.

Messages are stored as the OpenAI dicts :func:`~contextfold.core.messages.to_openai` writes and
read back with :func:`~contextfold.core.messages.from_openai`, so a loaded step equals the one
appended (messages, token counts, hashes, index). Metadata and usage are stored as JSON: they
must be JSON-serializable and come back as JSON values (a tuple comes back as a list);
:class:`MemoryStore` applies the same round trip so the two stores behave alike.

:class:`SQLiteStore` creates its file owner-only (0600; SQLite gives the ``-wal`` and ``-shm``
files the same mode: they hold conversation text too). Durability: the database runs in WAL
mode; each append is one ``BEGIN IMMEDIATE`` transaction that checks the index is next and
writes the step. With
``synchronous="FULL"`` (the default) the WAL is fsynced at every commit, so an append that has
returned survives a process kill and a power loss; ``"NORMAL"`` survives a process kill but may
lose the latest commits on power loss, and is faster.

Schema (``PRAGMA user_version`` = :data:`SCHEMA_VERSION`, ``PRAGMA application_id`` =
:data:`APPLICATION_ID` marks the file as a contextfold store)::

    sessions(session_id PK, system JSON|NULL, counter, meta JSON, created_at)
    steps(session_id, idx, messages JSON, tokens JSON, hashes JSON, PK(session_id, idx))
    calls(session_id, call_idx, step_idx, messages JSON, usage JSON, created_at,
          PK(session_id, call_idx))
    folds(session_id, fold_idx, record JSON, created_at, PK(session_id, fold_idx))

A version-1 file (before fold logs) is upgraded in place when opened: the ``folds`` table is
added, nothing stored changes.

:class:`PostgresStore` keeps the same tables and guarantees in a PostgreSQL database (its
schema adds a ``steps`` count to ``sessions`` and a ``contextfold_schema`` version table): each
write is one transaction that locks the session's row, so concurrent appends to one session
from several processes are serialised by the server. :func:`open_store` opens either from a
store argument: a ``postgresql://`` (or ``postgres://``) URL, or a file path.

Layout: :mod:`._common` holds the helpers both stores share, :mod:`.memory` the memory store,
:mod:`.sqlite` the SQLite store, :mod:`._sqlite_open` opening a file (checks, pragmas, schema);
:mod:`.postgres` and :mod:`._postgres_open` the PostgreSQL store; :mod:`._codec` decoding the
rows either database reads back; :mod:`.opening` the choice; :mod:`.temp_postgres` a
throwaway PostgreSQL server for the tests and the store benchmark.
"""

from contextfold.core.store._sqlite_open import APPLICATION_ID, SCHEMA_VERSION, create_private
from contextfold.core.store.memory import MemoryStore
from contextfold.core.store.opening import display_store, is_postgres_url, open_store
from contextfold.core.store.postgres import PostgresStore
from contextfold.core.store.sqlite import SQLiteStore

__all__ = [
    "APPLICATION_ID",
    "SCHEMA_VERSION",
    "MemoryStore",
    "PostgresStore",
    "SQLiteStore",
    "create_private",
    "display_store",
    "is_postgres_url",
    "open_store",
]
