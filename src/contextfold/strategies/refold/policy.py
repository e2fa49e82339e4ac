"""What a settled agent step becomes: refold's policy, kept apart from rendering (:mod:`.prefix`).

In the settled prefix the agent's own text of a step becomes a one-line note, ``[step N note]
SUMMARY (restore(step=N, part='text') shows the text)``, where it is shorter; its calls, reasoning
and provider parts stay as they are (:func:`settled_text`). A step marked STALE folds whole
(:func:`fold_summary`). Deterministic and model-free: a step always becomes the same note.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from contextfold.core.messages import AssistantMessage, Message
from contextfold.core.view import RestorePath

__all__ = [
    "NOTE",
    "NOTE_CHARS",
    "first_line",
    "fold_summary",
    "note_text",
    "settled_text",
    "text_path",
]

NOTE = "note"
"""The elision reason of a note. The cost rule weighs no restore risk for a note: the values a
later call uses come from tool outputs and user messages, and the calls stay in view."""

NOTE_CHARS = 160
"""Characters of the summary a note keeps at most."""


def text_path(step: int) -> RestorePath:
    """``restore(step=N, part='text')``: the agent's own text of step ``step``, verbatim."""
    return RestorePath("restore", (("step", step), ("part", "text")))


def first_line(text: str | None, limit: int = NOTE_CHARS) -> str:
    """The first line of ``text`` that is not blank, stripped, at most ``limit`` characters."""
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:limit]
    return ""


def note_text(step: int, content: str | None, progress: str | None) -> str:
    """The note standing for the agent's text ``content`` of step ``step``."""
    summary = (progress or "").strip()[:NOTE_CHARS] or first_line(content) or "(no text)"
    return f"[step {step} note] {summary} ({text_path(step)} shows the text)"


def settled_text(
    step: int,
    message: AssistantMessage,
    tokens: int,
    *,
    progress: str | None,
    count: Callable[[Message], int],
) -> tuple[AssistantMessage, int] | None:
    """The message with its text replaced by its note, and its token count; None when the
    text stays: there is none, or the note is not shorter than the ``tokens`` it has now.

    The note's summary is the step's PROGRESS text when it wrote one, else its first line, at
    most :data:`NOTE_CHARS` characters. The calls stay (each output answers one), and so do the
    reasoning and provider parts (a signed thinking block must travel verbatim)."""
    if not (message.content or "").strip():
        return None
    noted = replace(message, content=note_text(step, message.content, progress))
    kept = count(noted)
    return (noted, kept) if kept < tokens else None


def fold_summary(content: str | None, progress: str | None) -> str:
    """What the one-line note of a step the agent marked STALE says."""
    return progress or first_line(content, 200) or "(no summary)"
