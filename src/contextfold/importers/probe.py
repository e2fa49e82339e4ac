"""One file being told apart (:class:`Probe`) and what a format is (:class:`Format`).

A format claims a file from its content, whatever its name, and reads it; several formats ask
the same probe, and the one that claims it reads it, so a probe reads and parses the file once:
its first bytes, its first JSON lines and the whole document are cached as they are asked for.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from contextfold.core.errors import ImportFormatError
from contextfold.importers.base import Trajectory

__all__ = [
    "HEAD_BYTES",
    "Format",
    "Item",
    "Probe",
    "Unparsed",
    "Unreadable",
    "looks_like_trajectory",
]

Item = Trajectory | ImportFormatError
"""What reading a file yields: each trajectory, or the error that stops one from being read."""

HEAD_BYTES = 64 * 1024
"""Bytes :attr:`Probe.head` holds: enough for a few lines of any format's opening."""


_MARKERS = ('"simulations"', '"traj"', '"trajectory_format"', '"messages"', '"history"')


def looks_like_trajectory(text: str) -> bool:
    """Whether JSON text no format claims seems meant as a trajectory (it names a format's
    keys): such a file found in a folder is reported, where an unrelated one is skipped."""
    return any(marker in text for marker in _MARKERS)


@dataclass(frozen=True, slots=True)
class Unparsed:
    """A file that is not one JSON document, and why (the decoder's error)."""

    error: json.JSONDecodeError


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A file that cannot be read as UTF-8 text, and the error that says so."""

    error: ImportFormatError


class Probe:
    """One file, read lazily and at most once: ``path``, whether it was named ``explicit``\\ ly
    (not found in a folder), and its readings."""

    def __init__(self, path: Path, *, explicit: bool) -> None:
        self.path = path
        self.explicit = explicit

    @property
    def name(self) -> str:
        return str(self.path)

    @cached_property
    def head(self) -> bytes:
        """The first :data:`HEAD_BYTES` bytes (empty when the file cannot be read)."""
        if "text" in self.__dict__:
            return self.text.encode("utf-8", "surrogatepass")[:HEAD_BYTES]
        try:
            with self.path.open("rb") as file:
                return file.read(HEAD_BYTES)
        except OSError:
            return b""

    @cached_property
    def text(self) -> str:
        """The whole file as text; :class:`ImportFormatError` when it cannot be read as UTF-8."""
        try:
            return self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ImportFormatError(self.name, "file", f"cannot be read: {exc}") from exc

    @cached_property
    def document(self) -> Any:
        """The whole file as one JSON value, :class:`Unparsed` (not JSON, or JSON lines), or
        :class:`Unreadable` (not UTF-8 text)."""
        try:
            return json.loads(self.text)
        except json.JSONDecodeError as exc:
            return Unparsed(exc)
        except ImportFormatError as exc:
            return Unreadable(exc)

    @cached_property
    def first_lines(self) -> tuple[Any, ...]:
        """The JSON values of the first few non-blank lines of :attr:`head` (None for a line
        that does not parse, or is cut by the end of the head)."""
        lines = [line for line in self.head.splitlines() if line.strip()][:8]
        if len(self.head) == HEAD_BYTES and lines and not self.head.endswith(b"\n"):
            lines = lines[:-1]  # the last one runs past the head
        return tuple(_loads(line) for line in lines)

    def lines(self) -> Iterator[tuple[int, str]]:
        """Each line of the file with its number (from 1), blank ones too."""
        yield from enumerate(self.text.splitlines(), start=1)


def _loads(line: bytes) -> Any:
    try:
        return json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return None


@dataclass(frozen=True, slots=True)
class Format:
    """One trajectory format: how a folder walk finds its files, how it is told apart from the
    others by content, and how it is read."""

    name: str
    """Its name in help and docs (``claude-code``)."""
    summary: str
    """One line for help and docs: what it is, and where it lives on disk."""
    suffixes: tuple[str, ...]
    """File endings a folder walk picks up for it (``.jsonl``)."""
    claims: Callable[[Probe], bool]
    """Whether a file is in this format, from its content (cheap: its head, or the document a
    probe parses once for every format)."""
    read: Callable[[Probe], Iterator[Item]]
    """Each trajectory of a claimed file, or the error that stops one from being read."""
