"""Importers for recorded agent trajectories in their native formats.

tau2-bench results, tau-bench (v1) trajectory lists, mini-swe-agent ``*.traj.json``,
SWE-agent ``*.traj`` and plain JSONL, told apart by content (:mod:`.detect`). A batch never
stops on a bad file: whatever goes wrong becomes an error naming the file, counted, and the
rest is read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from contextfold.core.errors import ImportFormatError
from contextfold.importers import jsonl, miniswe, sweagent, tau2, taubench
from contextfold.importers.base import Trajectory
from contextfold.importers.detect import Format, detect, discover, looks_like_trajectory

__all__ = ["Trajectory", "iter_trajectories", "load_file"]

Item = Trajectory | ImportFormatError

_READERS: dict[Format, Callable[[Path, Any], Iterator[Item]]] = {
    "tau2": tau2.read,
    "tau-bench": taubench.read,
    "mini-swe-agent": miniswe.read,
    "swe-agent": sweagent.read,
}

_NO_FORMAT = (
    "matches no trajectory format (tau2 results, tau-bench trajectories, mini-swe-agent "
    ".traj.json, SWE-agent .traj, JSONL of chat messages)"
)


def iter_trajectories(paths: Iterable[str | Path]) -> Iterator[Trajectory | ImportFormatError]:
    """Every trajectory in ``paths`` (files, or folders searched recursively), in a
    deterministic order; an :class:`ImportFormatError` in place of each one that cannot be read.

    A malformed file or trajectory comes out as an
    :class:`~contextfold.core.errors.ImportFormatError` instead of being raised. JSON files in
    folders that are no trajectory format (a ``report.json``, a config) are skipped silently; only
    files that look like a trajectory but are broken are errors. Whatever goes wrong while reading
    one file (a file nested too deep for the parser, a FIFO or device named ``*.json``, an
    importer's own bug) becomes an error naming the file.
    """
    for path, explicit in discover(paths):
        yield from _read_guarded(path, explicit=explicit)


def load_file(path: str | Path) -> list[Trajectory]:
    """The trajectories of one file; raises :class:`ImportFormatError` (naming the file and the
    position in it) on the first malformed one."""
    out = []
    for item in _read_guarded(Path(path), explicit=True):
        if isinstance(item, ImportFormatError):
            raise item
        out.append(item)
    return out


def _read_guarded(path: Path, *, explicit: bool) -> Iterator[Item]:
    """:func:`_read`, with any failure on this file turned into an error naming it."""
    if path.exists() and not path.is_file():
        kind = "is not a regular file (a FIFO, socket or device); only regular files are read"
        yield ImportFormatError(str(path), "file", kind)
        return
    try:
        yield from _read(path, explicit=explicit)
    except ImportFormatError as exc:
        yield exc
    except Exception as exc:  # one bad file must never stop a batch
        problem = f"cannot be read: {type(exc).__name__}: {exc}"
        yield ImportFormatError(str(path), "file", problem)


def _read(path: Path, *, explicit: bool) -> Iterator[Item]:
    if path.suffix == ".jsonl":
        yield from jsonl.read(path)
        return
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        yield ImportFormatError(str(path), "file", f"cannot be read: {exc}")
        return
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        yield from _unparsed(path, text, exc, explicit=explicit)
        return
    fmt = detect(data)
    if fmt is not None:
        yield from _READERS[fmt](path, data)
    elif explicit or path.name.endswith((".traj.json", ".traj")):
        yield ImportFormatError(str(path), "file", _NO_FORMAT)


def _unparsed(
    path: Path, text: str, exc: json.JSONDecodeError, *, explicit: bool
) -> Iterator[Item]:
    """A file that is not one JSON document: JSON lines, or broken JSON."""
    if not (explicit or looks_like_trajectory(text)):
        return  # an unrelated file found in a folder
    if exc.msg == "Extra data" and _first_line_parses(text):
        yield from jsonl.read_text(path, text)
        return
    position = f"line {exc.lineno}, column {exc.colno}"
    yield ImportFormatError(str(path), position, f"invalid JSON: {exc.msg}")


def _first_line_parses(text: str) -> bool:
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        json.loads(first)
    except json.JSONDecodeError:
        return False
    return True
