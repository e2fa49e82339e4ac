"""Finding trajectory files: the paths given, and in folders every file whose name ends in a
suffix some format names (:data:`~contextfold.importers.registry.SUFFIXES`)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from contextfold.importers.registry import SUFFIXES

__all__ = ["discover"]


def discover(
    paths: Iterable[str | Path],
    suffixes: tuple[str, ...] = SUFFIXES,
    *,
    seen: set[str] | None = None,
) -> Iterator[tuple[Path, bool]]:
    """Each file to read, with whether it was named explicitly (not found in a folder).

    Paths are taken in the order given; folders are searched recursively for files ending in
    one of ``suffixes``, each folder's in sorted order. A file reached twice is read once (in
    this call, or in any that shares ``seen``). A path that does not exist is passed on (reading
    it reports it).
    """
    seen = set() if seen is None else seen
    for raw in paths:
        path = Path(raw)
        found = [(p, False) for p in _walk(path, suffixes)] if path.is_dir() else [(path, True)]
        for file, explicit in found:
            key = os.path.realpath(file)
            if key not in seen:
                seen.add(key)
                yield file, explicit


def _walk(root: Path, suffixes: tuple[str, ...]) -> list[Path]:
    files: list[Path] = []
    for folder, _dirs, names in os.walk(root):
        files.extend(Path(folder, n) for n in names if n.endswith(suffixes))
    return sorted(files)
