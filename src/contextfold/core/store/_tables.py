"""The store's tables as SQL, the same in SQLite and PostgreSQL (the ledger's are in
:mod:`._ledger`): sessions, their steps, calls, folds and replies."""

from __future__ import annotations

__all__ = ["session_tables"]

_SESSIONS = """
CREATE TABLE sessions (
    session_id TEXT PRIMARY KEY NOT NULL,
    system     TEXT,
    counter    TEXT NOT NULL,
    meta       TEXT NOT NULL,
{steps}    created_at TEXT NOT NULL
);
"""
_STEPS_COLUMN = "    steps      INTEGER NOT NULL DEFAULT 0 CHECK (steps >= 0),\n"

_REST = """CREATE TABLE steps (
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
CREATE TABLE folds (
    session_id TEXT NOT NULL REFERENCES sessions (session_id),
    fold_idx   INTEGER NOT NULL CHECK (fold_idx >= 0),
    record     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (session_id, fold_idx)
);
CREATE TABLE replies (
    session_id TEXT NOT NULL REFERENCES sessions (session_id),
    reply_idx  INTEGER NOT NULL CHECK (reply_idx >= 0),
    step_idx   INTEGER NOT NULL CHECK (step_idx >= 0),
    message    TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (session_id, reply_idx)
);
"""


def session_tables(*, step_count: bool) -> str:
    """The tables' statements; ``step_count``: sessions keep their step count in a column
    (PostgreSQL's, where replicas append to one session)."""
    return _SESSIONS.format(steps=_STEPS_COLUMN if step_count else "") + _REST
