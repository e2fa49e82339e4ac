"""The lines of a Claude Code log, each parsed once and sorted by what it holds.

Claude Code appends one JSON object a line: the conversation (``user`` and ``assistant`` lines,
one content block each, linked by ``parentUuid``), context it adds to the next request
(``attachment``), and its own bookkeeping, which holds no model context (:data:`BOOKKEEPING`).
A line that does not parse (a CLI killed mid-write, a line broken in two) is skipped and
counted; a line of a kind this reader does not know is skipped and counted when it holds no
``message``, and an error naming it when it does (a newer CLI's conversation would be lost).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from contextfold.core.errors import ImportFormatError
from contextfold.importers.records import broken_line

__all__ = ["BOOKKEEPING", "CHAINED", "Line", "Lines", "parse_lines"]

CHAINED = frozenset({"user", "assistant", "attachment", "system"})
"""Kinds that take part in the conversation's chain (``uuid`` and ``parentUuid``)."""

BOOKKEEPING = frozenset(
    {
        "summary", "file-history-snapshot", "queue-operation", "last-prompt", "mode",
        "permission-mode", "ai-title", "custom-title", "tag", "progress", "atis-latch",
        "cost-state", "tools-used", "api-request", "api-request-blob", "api-request-shape",
        "pr-link", "agent-name",
    }
)  # fmt: skip
"""Kinds that hold no model context: titles, modes, queue and file-history snapshots, progress,
costs, and the copies of each request the newest CLIs keep (the system prompt is read from
``api-request-shape``; the messages are read from their own lines)."""


@dataclass(frozen=True, slots=True)
class Line:
    """One parsed line and its number (from 1)."""

    number: int
    data: Mapping[str, Any]

    @property
    def kind(self) -> str:
        return str(self.data["type"])

    @property
    def uuid(self) -> str | None:
        value = self.data.get("uuid")
        return value if isinstance(value, str) else None

    @property
    def parent(self) -> str | None:
        value = self.data.get("parentUuid")
        return value if isinstance(value, str) else None

    @property
    def message(self) -> Mapping[str, Any]:
        value = self.data.get("message")
        return value if isinstance(value, Mapping) else {}


@dataclass(slots=True)
class Lines:
    """A file's lines: those in the chain, the request shapes, and a count of every kind."""

    chained: list[Line] = field(default_factory=list)
    shapes: list[Line] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    errors: list[ImportFormatError] = field(default_factory=list)


def parse_lines(path: str, numbered: Iterable[tuple[int, str]]) -> Lines:
    """Every line sorted: chained, request shapes, skipped (counted) or an error."""
    out = Lines()
    for number, text in numbered:
        if not text.strip():
            continue
        data = _parse(text)
        if data is None:
            out.counts["broken"] += 1
            out.errors.append(broken_line(path, number))
            continue
        kind = data.get("type")
        if not isinstance(kind, str):
            out.errors.append(ImportFormatError(path, f"line {number}", "a line with no 'type'"))
            continue
        out.counts[kind] += 1
        line = Line(number, data)
        if kind in CHAINED:
            out.chained.append(line)
        elif kind == "api-request-shape":
            out.shapes.append(line)
        elif kind not in BOOKKEEPING and "message" in data:
            problem = f"a {kind!r} line with a message, not understood (a newer Claude Code?)"
            out.errors.append(ImportFormatError(path, f"line {number}", problem))
    return out


def _parse(text: str) -> dict[str, Any] | None:
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None
    return data if isinstance(data, dict) else None
