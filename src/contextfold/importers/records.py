"""What the readers of the logs agent CLIs keep share: times, token counts, the model a session
names, and the error for a line that is not one JSON object."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from contextfold.core.errors import ImportFormatError
from contextfold.importers.base import RecordedCall

__all__ = ["at_line", "broken_line", "count", "iso_time", "main_model"]


def iso_time(value: Any) -> float | None:
    """An ISO 8601 time (``2025-12-12T03:01:52.575Z``) in seconds since the epoch."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def count(data: Mapping[str, Any], key: str) -> int:
    """A token count (0 where it is missing, negative or not a whole number)."""
    value = data.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def main_model(calls: Sequence[RecordedCall]) -> str | None:
    """The model most of the calls name."""
    named = Counter(c.model for c in calls if c.model)
    return named.most_common(1)[0][0] if named else None


def broken_line(path: str, number: int) -> ImportFormatError:
    """A line that is not one JSON object (a CLI killed mid-write, a line cut in two)."""
    problem = "a broken line (not one JSON object: cut short, or cut in two): skipped"
    return ImportFormatError(path, f"line {number}", problem)


def at_line(at: str, field: str, lines: Sequence[int]) -> str:
    """A reader's place ``FIELD[3].parts[0]`` as ``line 42, parts[0]``, where ``lines[3]`` is
    the log line item 3 came from (0: unknown; a place it cannot read stays as it is)."""
    head, _, rest = at.partition("]")
    index = head.removeprefix(f"{field}[")
    if not index.isdigit() or int(index) >= len(lines):
        return at
    where = f"line {lines[int(index)]}"
    rest = rest.lstrip(".")
    return f"{where}, {rest}" if rest else where
