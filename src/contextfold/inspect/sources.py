"""What ``contextfold inspect`` shows: the sessions of stores and recorded trajectories.

Each PATH is a store (sessions from ``run --store`` or ``serve --store``): a SQLite file or a
``postgresql://`` URL (opened with :func:`~contextfold.core.store.open_store`), or files and
folders of recorded trajectories in any format ``replay`` reads. A stored session shows the
calls as they were sent, then each ``-s`` strategy replayed on its steps; a trajectory shows
each ``-s`` strategy replayed. Sessions are built when first asked for, then kept.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contextfold.core.counters import resolve_counter
from contextfold.core.errors import ContextFoldError, ImportFormatError
from contextfold.core.history import History
from contextfold.core.store import display_store, is_postgres_url, open_store
from contextfold.importers import Trajectory, iter_trajectories
from contextfold.inspect.encode import SessionEncoder
from contextfold.inspect.runs import Setup, replayed_calls, stored_calls

__all__ = ["Catalog", "Entry", "collect", "is_store"]

_SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass(slots=True)
class Entry:
    """One session of the index; its JSON is built on first use."""

    label: str
    kind: str
    build: Callable[[], dict[str, Any]]
    _data: dict[str, Any] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def data(self) -> dict[str, Any]:
        with self._lock:
            if self._data is None:
                self._data = self.build()
            return self._data


@dataclass(slots=True)
class Catalog:
    entries: list[Entry]
    skipped: list[str]

    def index(self) -> dict[str, Any]:
        return {
            "sessions": [
                {"id": i, "label": e.label, "kind": e.kind} for i, e in enumerate(self.entries)
            ],
            "skipped": self.skipped,
        }


def collect(
    paths: Sequence[str | Path], specs: Sequence[str], setup: Setup, tokenizer: str
) -> Catalog:
    """Every session of ``paths`` (files, folders, store URLs); raises
    :class:`ContextFoldError` when there is none."""
    entries: list[Entry] = []
    skipped: list[str] = []
    for target in paths:
        if is_postgres_url(target):
            entries.extend(_store_entries(str(target), specs, setup))
            continue
        path = Path(target)
        if not path.exists():
            raise ContextFoldError(f"{path} does not exist")
        if is_store(path):
            entries.extend(_store_entries(path, specs, setup))
            continue
        for item in iter_trajectories([path]):
            if isinstance(item, ImportFormatError):
                skipped.append(str(item))
            else:
                entries.append(_trajectory_entry(item, specs, setup, tokenizer))
    if not entries:
        found = f" ({len(skipped)} skipped: {skipped[0]})" if skipped else ""
        shown = ", ".join(map(display_store, paths))  # a URL without its password
        raise ContextFoldError(f"no session or trajectory found in {shown}{found}")
    return Catalog(entries, skipped)


def is_store(target: str | Path) -> bool:
    """A store of ``run --store`` or ``serve --store``: a PostgreSQL URL or a SQLite file."""
    if is_postgres_url(target):
        return True
    path = Path(target)
    if not path.is_file():
        return False
    with path.open("rb") as f:
        return f.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC


def _store_entries(target: str | Path, specs: Sequence[str], setup: Setup) -> list[Entry]:
    with open_store(target) as store:
        sessions = store.list_sessions()
    name = Path(target).name if isinstance(target, Path) else display_store(target)
    return [
        Entry(f"{name}: {sid}", "store", _store_builder(target, sid, specs, setup))
        for sid in sessions
    ]


def _store_builder(
    target: str | Path, sid: str, specs: Sequence[str], setup: Setup
) -> Callable[[], dict[str, Any]]:
    def build() -> dict[str, Any]:  # opened here: a SQLite connection stays in its thread
        with open_store(target) as store:
            history = History.open(store, sid)
            calls = store.load_calls(sid)
        enc = SessionEncoder()
        spec = history.meta.get("strategy")
        name = f"sent ({spec})" if spec else "sent"
        runs = [enc.run(name, stored_calls(history, calls, setup), note="as the call log kept")]
        runs += _replayed(enc, history, specs, setup)
        return _session(enc, sid, display_store(target), history, runs)

    return build


def _trajectory_entry(
    traj: Trajectory, specs: Sequence[str], setup: Setup, tokenizer: str
) -> Entry:
    def build() -> dict[str, Any]:
        history = traj.to_history(resolve_counter(tokenizer))
        enc = SessionEncoder()
        runs = _replayed(enc, history, specs, setup)
        return _session(enc, traj.id, traj.source, history, runs)

    return Entry(f"{Path(traj.source).name}: {traj.id}", "trajectory", build)


def _replayed(
    enc: SessionEncoder, history: History, specs: Sequence[str], setup: Setup
) -> list[dict[str, Any]]:
    runs = []
    for spec in specs:
        calls = replayed_calls(history.system, history.steps, spec, history, setup)
        runs.append(enc.run(spec, calls, note="replayed"))
    return runs


def _session(
    enc: SessionEncoder, sid: str, source: str, history: History, runs: list[dict[str, Any]]
) -> dict[str, Any]:
    steps = enc.steps(history.steps)
    system = None if history.system is None else enc.message(history.system)
    return {
        "id": sid,
        "source": source,
        "system": system,
        "steps": steps,
        "runs": runs,
        "msgs": enc.msgs,
        "els": enc.els,
    }
