"""A valid store SQLite cannot write beside is reported as such, never as corrupt."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from contextfold.core.errors import StoreError
from contextfold.core.history import History
from contextfold.core.messages import SystemMessage, UserMessage
from contextfold.core.store import SQLiteStore


def _store_with_a_session(path: Path) -> None:
    with SQLiteStore(path) as store:
        History(SystemMessage("s"), store=store, session_id="a").append(UserMessage("hi"))


def test_a_store_whose_wal_file_cannot_be_created_is_not_called_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    _store_with_a_session(path)
    (tmp_path / "sessions.db-wal").mkdir()  # SQLite cannot create its WAL file there
    with pytest.raises(StoreError) as caught:
        SQLiteStore(path)
    message = str(caught.value)
    assert "not a contextfold store" not in message and "corrupt" in message
    assert "sessions.db-wal" in message and "not reported corrupt" in message


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes anywhere")
def test_a_store_in_a_read_only_directory_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    _store_with_a_session(folder / "sessions.db")
    folder.chmod(0o555)
    try:
        with pytest.raises(StoreError, match=r"is read-only.*copy it to a writable directory"):
            SQLiteStore(folder / "sessions.db")
    finally:
        folder.chmod(0o755)
