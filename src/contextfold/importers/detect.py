"""Finding trajectory files and telling their format from their content, whatever their name."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, TypeAlias

__all__ = ["Format", "detect", "discover", "looks_like_trajectory"]

Format: TypeAlias = Literal["tau2", "tau-bench", "mini-swe-agent", "swe-agent"]
"""The formats that are one JSON document (JSONL is told apart before parsing)."""

SUFFIXES = (".json", ".jsonl", ".traj")

_MARKERS = ('"simulations"', '"traj"', '"trajectory_format"', '"messages"', '"history"')


def discover(paths: Iterable[str | Path]) -> Iterator[tuple[Path, bool]]:
    """Each file to read, with whether it was named explicitly (not found in a folder).

    Paths are taken in the order given; each folder's files in sorted order. A file reached
    twice is read once. A path that does not exist is passed on (reading it reports it).

    Folders are searched recursively for ``*.json``, ``*.jsonl`` and ``*.traj`` (SWE-agent)
    files, in sorted order.
    """
    seen: set[str] = set()
    for raw in paths:
        path = Path(raw)
        found = [(p, False) for p in _walk(path)] if path.is_dir() else [(path, True)]
        for file, explicit in found:
            key = os.path.realpath(file)
            if key not in seen:
                seen.add(key)
                yield file, explicit


def _walk(root: Path) -> list[Path]:
    files: list[Path] = []
    for folder, _dirs, names in os.walk(root):
        files.extend(Path(folder, n) for n in names if n.endswith(SUFFIXES))
    return sorted(files)


def detect(data: Any) -> Format | None:
    """The format a parsed JSON document is in, or None if it is no trajectory format.

    - ``tau2``: an object with ``simulations`` and ``tasks``;
    - ``tau-bench``: a list of objects with ``traj``;
    - ``swe-agent``: an object with ``history`` and ``trajectory`` (SWE-agent's ``.traj``);
    - ``mini-swe-agent``: an object with ``messages`` and ``trajectory_format`` or ``instance_id``;
    - ``jsonl``: any ``*.jsonl`` file, or a file that holds one JSON value per line.
    """
    if isinstance(data, Mapping):
        if "simulations" in data and "tasks" in data:
            return "tau2"
        if "history" in data and "trajectory" in data:
            return "swe-agent"
        if "messages" in data and ("trajectory_format" in data or "instance_id" in data):
            return "mini-swe-agent"
        return None
    if isinstance(data, list) and any(isinstance(e, Mapping) and "traj" in e for e in data):
        return "tau-bench"
    return None


def looks_like_trajectory(text: str) -> bool:
    """Whether unparseable JSON text seems meant as a trajectory (it names a format's keys)."""
    return any(marker in text for marker in _MARKERS)
