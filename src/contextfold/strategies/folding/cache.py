"""The fold cache: folder replies kept on disk under the folder's name and its exact input.

A real folder is slow; with the cache an identical re-run of a replay is deterministic and
spends nothing, its records reporting the original usage marked as cache hits.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contextfold.core.errors import StoreError
from contextfold.core.messages import Message, to_openai
from contextfold.core.store import create_private

__all__ = ["KEY_VERSION", "CachedReply", "FoldCache", "default_cache_path"]

KEY_VERSION = 2
"""Part of every key; raised when a folder's decoding changes, so older replies are not reused
(2: the embedded model's schema-bound replies got a repeat penalty)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key        TEXT PRIMARY KEY NOT NULL,
    folder     TEXT NOT NULL,
    text       TEXT NOT NULL,
    usage      TEXT NOT NULL,
    ms         REAL NOT NULL
)
"""


def default_cache_path() -> Path:
    """The fold cache's file.

    ``$CONTEXTFOLD_CACHE_DIR/folds.sqlite``, else ``folds.sqlite`` under
    ``$XDG_CACHE_HOME/contextfold`` (``~/.cache/contextfold``).
    """
    base = os.environ.get("CONTEXTFOLD_CACHE_DIR")
    if base:
        return Path(base) / "folds.sqlite"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "contextfold" / "folds.sqlite"


@dataclass(frozen=True, slots=True)
class CachedReply:
    text: str
    usage: Mapping[str, int]
    ms: float


class FoldCache:
    """Folder replies in one SQLite file (WAL; safe to share between processes).

    A reply is kept with its text, the usage reported and the wall time it took, under a key of the
    folder's name and everything it was sent (messages, schema, token limit).
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            create_private(self.path)  # folder replies hold conversation text
            self._conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(
                f"cannot open the fold cache {self.path}: {exc}; give another path with "
                "--fold-cache PATH, or turn it off with --no-fold-cache"
            ) from exc
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(
        folder: str,
        messages: Sequence[Message],
        schema: Mapping[str, Any] | None,
        max_tokens: int,
    ) -> str:
        data = {
            "version": KEY_VERSION,
            "folder": folder,
            "messages": [to_openai(m) for m in messages],
            "schema": schema,
            "max_tokens": max_tokens,
        }
        text = json.dumps(data, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def get(self, key: str) -> CachedReply | None:
        try:
            row = self._conn.execute(
                "SELECT text, usage, ms FROM replies WHERE key = ?", (key,)
            ).fetchone()
        except sqlite3.Error:
            row = None  # an unreadable cache is a miss, never a failure
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return CachedReply(row[0], json.loads(row[1]), float(row[2]))

    def put(self, key: str, folder: str, reply: CachedReply) -> None:
        with contextlib.suppress(sqlite3.Error):  # unwritable: a re-run only costs its time
            self._conn.execute(
                "INSERT OR REPLACE INTO replies (key, folder, text, usage, ms)"
                " VALUES (?, ?, ?, ?, ?)",
                (key, folder, reply.text, json.dumps(dict(reply.usage)), reply.ms),
            )

    def close(self) -> None:
        self._conn.close()
