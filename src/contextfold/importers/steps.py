"""Shared helpers of the importers: grouping messages into steps, OpenAI dicts, outcomes.

Every importer turns its native records into a list of ``(position, message)`` pairs, where
``position`` names the message inside the file (``simulations[3].messages[12]``), and hands it
to :func:`group_steps`, the library's grouper in its lenient mode
(:mod:`contextfold.core.grouping`), which splits it into the steps
:func:`~contextfold.core.history.make_step` accepts and names the position of anything that
cannot be grouped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contextfold.core.errors import ImportFormatError, MessageFormatError
from contextfold.core.grouping import Grouped, Labeled, parse_messages
from contextfold.core.grouping import group_steps as group_messages
from contextfold.core.messages import SystemMessage

__all__ = ["Grouped", "Labeled", "as_outcome", "group_steps", "openai_conversation"]


def group_steps(
    path: str, items: Sequence[Labeled], *, system: SystemMessage | None = None
) -> Grouped:
    """Split messages into steps with the library's grouper
    (:func:`contextfold.core.grouping.group_steps`), leniently: calls still unanswered when
    the conversation ends are dropped from the final assistant message (and counted). A
    result that answers no pending call, calls left unanswered before another message, and
    system messages inside the conversation raise :class:`ImportFormatError` naming the
    message's position in ``path``.
    """
    try:
        return group_messages(items, system=system, lenient=True)
    except MessageFormatError as exc:
        raise ImportFormatError(path, exc.at, exc.problem) from exc


def openai_conversation(path: str, prefix: str, raw: Any) -> Grouped:
    """Group a list of OpenAI chat dicts; a leading system message becomes ``system``.

    ``prefix`` names the list in the file; each message is named ``{prefix}[i]``.
    """
    if not isinstance(raw, list):
        raise ImportFormatError(path, prefix, f"expected a list of messages, got {_kind(raw)}")
    try:
        items = parse_messages(raw, prefix)
    except MessageFormatError as exc:
        raise ImportFormatError(path, exc.at, exc.problem) from exc
    return group_steps(path, items)


def as_outcome(path: str, label: str, value: Any) -> float | None:
    """A recorded outcome as a float (booleans as 1.0/0.0); None when absent."""
    if value is None:
        return None
    if isinstance(value, bool | int | float):
        return float(value)
    raise ImportFormatError(path, label, f"outcome must be a number, got {_kind(value)}")


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__
