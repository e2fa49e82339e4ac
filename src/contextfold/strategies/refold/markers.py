"""Completion markers: the agent ends each reply with ``PROGRESS:`` and ``STALE:`` lines.

Only the agent's own reply is read (never tool outputs or user messages), and only its last
lines: ``PROGRESS: <what this step achieved>`` and ``STALE: <step numbers no longer needed>``
(numbers and ranges, e.g. ``3, 5-7``; ``none`` or empty for nothing). A marker counts only in
the block of marker lines that ends the reply (blank lines between them allowed): one quoted
earlier in the reply (inside a heredoc, a quoted tool output) is text, not a marker. A missing
line folds nothing; a malformed ``STALE`` line folds nothing and is counted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["INSTRUCTIONS", "Markers", "parse_markers"]

INSTRUCTIONS = (
    "[Context note from the runtime, not from the user] Tool outputs from here on are "
    "labelled [step N]; some are now folded or omitted. End every reply with two short lines:\n"
    "PROGRESS: <what this step achieved>\nSTALE: <numbers of earlier steps whose output you no "
    "longer need, as a list or ranges, or none>\nStale steps are folded into one-line notes; "
    "call restore(step=N) to see any folded or omitted output again."
)
"""Shown from refold's first advance on, as a note before the first step it changes."""

_PROGRESS = re.compile(r"^\s*PROGRESS:\s*(.+?)\s*$", re.MULTILINE)
_STALE = re.compile(r"^\s*STALE:[ \t]*(.*?)\s*$", re.MULTILINE)
_ITEM = re.compile(r"^(\d+)(?:-(\d+))?$")
_NONE = {"", "none", "n/a", "-", "nothing"}
_MAX_RANGE = 1000


@dataclass(frozen=True, slots=True)
class Markers:
    progress: str | None
    stale: frozenset[int]
    malformed: bool
    """A STALE line was present but could not be read (nothing is folded from it)."""


def parse_markers(text: str | None) -> Markers:
    """Read the markers from an assistant reply's text; the last occurrence of each wins."""
    text = _final_lines(text)
    if not text:
        return Markers(None, frozenset(), False)
    progress = _PROGRESS.findall(text)
    stale_lines = _STALE.findall(text)
    if not stale_lines:
        return Markers(progress[-1] if progress else None, frozenset(), False)
    stale = _parse_stale(stale_lines[-1])
    return Markers(
        progress[-1] if progress else None,
        stale if stale is not None else frozenset(),
        stale is None,
    )


def _final_lines(text: str | None) -> str:
    """The marker lines that end ``text`` (blank lines between them allowed)."""
    tail: list[str] = []
    for line in reversed((text or "").splitlines()):
        if line.strip() and not (_PROGRESS.match(line) or _STALE.match(line)):
            break
        tail.append(line)
    return "\n".join(reversed(tail))


def _parse_stale(value: str) -> frozenset[int] | None:
    if value.strip().lower() in _NONE:
        return frozenset()
    steps: set[int] = set()
    normalized = re.sub(r"\s*-\s*", "-", value.strip().strip("[]().")).replace(";", ",")
    for item in re.split(r"[,\s]+", normalized):
        match = _ITEM.match(item)
        if match is None:
            return None
        lo = int(match.group(1))
        hi = int(match.group(2) or lo)
        if hi < lo or hi - lo > _MAX_RANGE:
            return None
        steps.update(range(lo, hi + 1))
    return frozenset(steps)
