"""Plain JSONL: one trajectory per line.

A line is a JSON list of OpenAI chat dicts, or an object ``{"messages": [...]}`` with optional
``id``, ``outcome`` and ``meta``. A leading system message becomes the trajectory's system
message. Blank lines are skipped; the id defaults to ``{file stem}:{line number}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from contextfold.core.errors import ImportFormatError
from contextfold.importers.base import Trajectory
from contextfold.importers.probe import Format, Probe, Unparsed, looks_like_trajectory
from contextfold.importers.steps import as_outcome, openai_conversation

__all__ = ["FORMAT", "read", "read_text"]


def read(path: Path) -> Iterator[Trajectory | ImportFormatError]:
    """Each line of the file as a trajectory, or the error that stops it from being read."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        yield ImportFormatError(str(path), "file", f"cannot be read: {exc}")
        return
    yield from read_text(path, text)


def read_text(path: Path, text: str) -> Iterator[Trajectory | ImportFormatError]:
    """Like :func:`read`, for a file already read."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield _line(path, number, line)
        except ImportFormatError as exc:
            yield exc


def _line(path: Path, number: int, line: str) -> Trajectory:
    name, where = str(path), f"line {number}"
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        position = f"{where}, column {exc.colno}"
        raise ImportFormatError(name, position, f"invalid JSON: {exc.msg}") from exc
    record: Mapping[str, Any] = {"messages": data} if isinstance(data, list) else data
    if not isinstance(record, Mapping) or "messages" not in record:
        raise ImportFormatError(
            name, where, "expected a list of chat messages or an object with 'messages'"
        )
    grouped = openai_conversation(name, f"{where}, messages", record["messages"])
    ident, meta = record.get("id"), record.get("meta") or {}
    if not isinstance(ident, str | int | None) or not isinstance(meta, Mapping):
        raise ImportFormatError(name, where, "'id' must be a string and 'meta' an object")
    info: dict[str, Any] = {**meta, "format": "jsonl", "file": path.name, "line": number}
    if grouped.dropped_calls:
        info["unanswered_calls_dropped"] = grouped.dropped_calls
    return Trajectory(
        id=str(ident) if ident is not None else f"{path.stem}:{number}",
        source=name,
        system=grouped.system,
        steps=grouped.steps,
        outcome=as_outcome(name, f"{where}, outcome", record.get("outcome")),
        meta=info,
    )


def _claims(probe: Probe) -> bool:
    """Any ``*.jsonl``; another file when it is JSON lines meant as trajectories (named, or
    naming a format's keys)."""
    if probe.path.suffix == ".jsonl":
        return True
    data = probe.document
    if not (isinstance(data, Unparsed) and data.error.msg == "Extra data"):
        return False
    if not (probe.explicit or looks_like_trajectory(probe.text)):
        return False
    first = next((line for line in probe.text.splitlines() if line.strip()), "")
    try:
        json.loads(first)
    except (json.JSONDecodeError, RecursionError):
        return False
    return True


FORMAT = Format(
    name="jsonl",
    summary='one OpenAI message list (or {"messages", "id", "outcome"}) a line',
    suffixes=(".jsonl",),
    claims=_claims,
    read=lambda probe: read_text(probe.path, probe.text),
)
