"""Every trajectory format, one object each, in order of precedence: a file is read by the first
format that claims it (plain JSONL of chat messages last: it claims any ``*.jsonl``). A new
format is one module with a :class:`~contextfold.importers.probe.Format` and one line here."""

from __future__ import annotations

from contextfold.importers import (
    claude_code,
    codex,
    gemini_cli,
    jsonl,
    miniswe,
    store,
    sweagent,
    tau2,
    taubench,
)
from contextfold.importers.probe import Format, Probe

__all__ = ["FORMATS", "SUFFIXES", "claiming", "format_names"]

FORMATS: tuple[Format, ...] = (
    claude_code.FORMAT,
    codex.FORMAT,
    gemini_cli.FORMAT,
    store.FORMAT,
    tau2.FORMAT,
    taubench.FORMAT,
    sweagent.FORMAT,
    miniswe.FORMAT,
    jsonl.FORMAT,
)

SUFFIXES: tuple[str, ...] = tuple(dict.fromkeys(s for f in FORMATS for s in f.suffixes))
"""The file endings a folder walk picks up: every format's."""


def claiming(probe: Probe) -> Format | None:
    """The first format that claims the file, or None."""
    return next((f for f in FORMATS if f.claims(probe)), None)


def format_names() -> str:
    """The formats' names, for a message: ``claude-code, tau2, ...``."""
    return ", ".join(f.name for f in FORMATS)
