"""Completion markers: the agent ends each reply with ``PROGRESS:`` and ``STALE:`` lines.

Only the block of marker lines that ends the agent's own reply counts, so a marker quoted in a
tool output or earlier in the reply is text; a missing or malformed one folds nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["INSTRUCTIONS", "MAX_STALE_ITEMS", "Markers", "parse_markers", "split_markers"]

INSTRUCTIONS = (
    "[Context note from the runtime, not from the user] Tool outputs from here on are "
    "labelled [step N]; some are now folded or omitted. End every reply with two short lines:\n"
    "PROGRESS: <what this step achieved>\nSTALE: <numbers of earlier steps whose output you no "
    "longer need, as a list or ranges, or none>\nStale steps are folded into one-line notes; "
    "call restore(step=N) to see any folded or omitted output again."
)
"""Shown from refold's first advance on, as a note before the first step it changes."""

_ITEM = re.compile(r"([0-9]{1,9})(?:-([0-9]{1,9}))?")
_SEPARATORS = re.compile(r"[,;\s]+")
_NONE = {"", "none", "n/a", "-", "nothing"}
_MAX_RANGE = 1000
MAX_STALE_ITEMS = 64
"""Numbers and ranges read from one STALE line; the rest are ignored (and counted), so a
hostile line folds at most 64 x 1,001 steps and costs work linear in its length."""


@dataclass(frozen=True, slots=True)
class Markers:
    progress: str | None
    stale: frozenset[int]
    malformed: bool
    """A STALE line was present but could not be read (nothing is folded from it)."""
    ignored: int = 0
    """Items of the STALE line past the first :data:`MAX_STALE_ITEMS`, not read."""


def parse_markers(text: str | None) -> Markers:
    """Read the markers from an assistant reply's text; the last occurrence of each wins.

    Line by line with string methods (no pattern that backtracks across lines or runs of
    spaces), so the work is linear in the text.

    ``PROGRESS: <what this step achieved>`` and ``STALE: <step numbers no longer needed>`` (numbers
    and ranges, e.g. ``3, 5-7``; ``none`` or empty for nothing), in the block of marker lines that
    ends the reply (blank lines between them allowed). A malformed ``STALE`` line folds nothing and
    is counted; one of more than :data:`MAX_STALE_ITEMS` numbers and ranges folds the first ones
    only.
    """
    progress: str | None = None
    stale: str | None = None
    for kind, value in _final_markers(text or ""):
        if kind == "PROGRESS":
            progress = value
        else:
            stale = value
    if stale is None:
        return Markers(progress, frozenset(), False)
    steps, ignored = _parse_stale(stale)
    return Markers(progress, steps or frozenset(), steps is None, ignored)


def split_markers(text: str) -> tuple[str, str]:
    """``text`` without the block of marker lines that ends it (and the blank space before
    that block), and that block: ``shown + markers == text``; ``(text, "")`` without one."""
    lines = text.splitlines(keepends=True)
    start = None
    for i in range(len(lines) - 1, -1, -1):
        if _marker(lines[i]) is not None:
            start = i
        elif lines[i].strip():
            break
    if start is None:
        return text, ""
    cut = len("".join(lines[:start]).rstrip())
    return text[:cut], text[cut:]


def _final_markers(text: str) -> list[tuple[str, str]]:
    """The markers of the lines that end ``text`` (blank lines between them allowed), in
    order."""
    found: list[tuple[str, str]] = []
    for line in reversed(text.splitlines()):
        marker = _marker(line)
        if marker is None:
            if line.strip():
                break
            continue
        found.append(marker)
    return found[::-1]


def _marker(line: str) -> tuple[str, str] | None:
    stripped = line.strip()
    if stripped.startswith("STALE:"):
        return "STALE", stripped[6:].strip()
    if stripped.startswith("PROGRESS:") and stripped[9:].strip():
        return "PROGRESS", stripped[9:].strip()
    return None


def _parse_stale(value: str) -> tuple[frozenset[int] | None, int]:
    """The steps a STALE value names (None when malformed) and how many items were ignored."""
    value = value.strip("[]().")
    if value.strip().lower() in _NONE:
        return frozenset(), 0
    joined = "-".join(part.strip() for part in value.split("-"))  # "3 - 5" reads as "3-5"
    items = [item for item in _SEPARATORS.split(joined) if item]
    steps: set[int] = set()
    for item in items[:MAX_STALE_ITEMS]:
        match = _ITEM.fullmatch(item)
        if match is None:
            return None, 0
        lo = int(match.group(1))
        hi = int(match.group(2) or lo)
        if hi < lo or hi - lo > _MAX_RANGE:
            return None, 0
        steps.update(range(lo, hi + 1))
    return frozenset(steps), max(0, len(items) - MAX_STALE_ITEMS)
