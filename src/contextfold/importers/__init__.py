"""Importers for recorded agent trajectories in their native formats.

Every format is one object in the registry (:mod:`.registry`): the logs of Claude Code, Codex
CLI and Gemini CLI, contextfold's own store, tau2-bench results, tau-bench (v1) trajectory
lists, mini-swe-agent ``*.traj.json``, SWE-agent ``*.traj`` and plain JSONL, told apart by
content, whatever the file's name. A batch never stops on a bad file: whatever goes wrong
becomes an error naming the file, counted, and the rest is read.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from contextfold.core.errors import ImportFormatError
from contextfold.core.store import is_postgres_url
from contextfold.importers.base import RecordedCall, Trajectory
from contextfold.importers.probe import (
    Format,
    Item,
    Probe,
    Unparsed,
    Unreadable,
    looks_like_trajectory,
)
from contextfold.importers.registry import FORMATS, claiming, format_names
from contextfold.importers.store import SQLITE_MAGIC, read_store
from contextfold.importers.walk import discover

__all__ = ["FORMATS", "Format", "RecordedCall", "Trajectory", "iter_trajectories", "load_file"]


def iter_trajectories(paths: Iterable[str | Path]) -> Iterator[Trajectory | ImportFormatError]:
    """Every trajectory in ``paths`` (files, or folders searched recursively), in a
    deterministic order; an :class:`ImportFormatError` in place of each one that cannot be read.

    A malformed file or trajectory comes out as an
    :class:`~contextfold.core.errors.ImportFormatError` instead of being raised. Files in
    folders that no format claims (a ``report.json``, a config) are skipped silently; only
    files that look like a trajectory but are broken are errors. Whatever goes wrong while reading
    one file (a file nested too deep for the parser, a FIFO or device named ``*.json``, an
    importer's own bug) becomes an error naming the file. A ``postgresql://`` URL is a store.
    """
    seen: set[str] = set()
    for raw in paths:
        if is_postgres_url(raw):
            yield from read_store(str(raw))
            continue
        for path, explicit in discover([raw], seen=seen):
            yield from _read_guarded(Probe(path, explicit=explicit))


def load_file(path: str | Path) -> list[Trajectory]:
    """The trajectories of one file; raises :class:`ImportFormatError` (naming the file and the
    position in it) on the first malformed one."""
    out = []
    for item in _read_guarded(Probe(Path(path), explicit=True)):
        if isinstance(item, ImportFormatError):
            raise item
        out.append(item)
    return out


def _read_guarded(probe: Probe) -> Iterator[Item]:
    """:func:`_read`, with any failure on this file turned into an error naming it."""
    path = probe.path
    if path.exists() and not path.is_file():
        kind = "is not a regular file (a FIFO, socket or device); only regular files are read"
        yield ImportFormatError(str(path), "file", kind)
        return
    try:
        yield from _read(probe)
    except ImportFormatError as exc:
        yield exc
    except Exception as exc:  # one bad file must never stop a batch
        problem = f"cannot be read: {type(exc).__name__}: {exc}"
        yield ImportFormatError(str(path), "file", problem)


def _read(probe: Probe) -> Iterator[Item]:
    """The file read by the format that claims it; else an error when it was named, or looks
    like a trajectory, and nothing when it is an unrelated file found in a folder."""
    found = claiming(probe)
    if found is not None:
        yield from found.read(probe)
        return
    if probe.head.startswith(SQLITE_MAGIC):
        if probe.explicit:
            problem = "an SQLite database but not a contextfold store: no sessions to read"
            yield ImportFormatError(probe.name, "file", problem)
        return
    data = probe.document
    if isinstance(data, Unreadable):
        yield data.error
    elif isinstance(data, Unparsed):
        if probe.explicit or looks_like_trajectory(probe.text):
            exc = data.error
            position = f"line {exc.lineno}, column {exc.colno}"
            yield ImportFormatError(probe.name, position, f"invalid JSON: {exc.msg}")
    elif probe.explicit or probe.path.name.endswith((".traj.json", ".traj")):
        problem = f"matches no trajectory format (the formats: {format_names()})"
        yield ImportFormatError(probe.name, "file", problem)
