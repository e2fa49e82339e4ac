"""Shared helpers of the importers: grouping messages into steps, OpenAI dicts, outcomes.

Every importer turns its native records into a list of ``(position, message)`` pairs, where
``position`` names the message inside the file (``simulations[3].messages[12]``), and hands it
to :func:`group_steps`, which splits it into the steps :func:`~contextfold.core.history.make_step`
accepts and names the position of anything that cannot be grouped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

from contextfold.core.errors import ImportFormatError, MessageFormatError
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
    from_openai,
)

__all__ = ["Grouped", "Labeled", "as_outcome", "group_steps", "openai_conversation"]

Labeled: TypeAlias = tuple[str, Message]
"""A message with its position in the source file."""


@dataclass(frozen=True, slots=True)
class Grouped:
    """Messages grouped into steps (and the system message, where the source had one)."""

    system: SystemMessage | None
    steps: tuple[tuple[Message, ...], ...]
    dropped_calls: int = 0
    """Unanswered tool calls dropped from the final assistant message (the run ended first)."""


def group_steps(
    path: str, items: Sequence[Labeled], *, system: SystemMessage | None = None
) -> Grouped:
    """Split messages into steps: each user message is a step; each assistant message and the
    tool results that follow it (in any order) are a step.

    Calls still unanswered when the conversation ends are dropped from the final assistant
    message; a result that answers no pending call, calls left unanswered before another
    message, and system messages inside the conversation raise :class:`ImportFormatError`.
    """
    steps: list[list[Message]] = []
    pending: set[str] = set()
    head = ""
    for label, message in items:
        if isinstance(message, ToolMessage):
            if message.tool_call_id not in pending:
                raise ImportFormatError(
                    path,
                    label,
                    f"tool result for call {message.tool_call_id!r} answers no "
                    "unanswered call of the assistant message before it",
                )
            pending.discard(message.tool_call_id)
            steps[-1].append(message)
            continue
        if pending:
            raise ImportFormatError(
                path, head, f"tool calls {sorted(pending)} get no result before the next message"
            )
        steps.append([message])
        head = label
        pending = _calls_of(path, label, message)
    if pending:
        steps[-1][0] = _without_calls(steps[-1][0], pending)
    return Grouped(system, tuple(tuple(s) for s in steps), len(pending))


def _calls_of(path: str, label: str, message: Message) -> set[str]:
    if isinstance(message, UserMessage):
        return set()
    if not isinstance(message, AssistantMessage):
        raise ImportFormatError(
            path,
            label,
            f"a {message.role} message inside the conversation (only a leading "
            "system message is supported)",
        )
    ids = [c.id for c in message.tool_calls]
    if len(set(ids)) != len(ids):
        raise ImportFormatError(path, label, f"the assistant repeats a tool call id: {ids}")
    return set(ids)


def _without_calls(message: Message, unanswered: set[str]) -> Message:
    assert isinstance(message, AssistantMessage)
    kept = tuple(c for c in message.tool_calls if c.id not in unanswered)
    return replace(message, tool_calls=kept)


def openai_conversation(path: str, prefix: str, raw: Any) -> Grouped:
    """Group a list of OpenAI chat dicts; a leading system message becomes ``system``.

    ``prefix`` names the list in the file; each message is named ``{prefix}[i]``.
    """
    if not isinstance(raw, list):
        raise ImportFormatError(path, prefix, f"expected a list of messages, got {_kind(raw)}")
    items: list[Labeled] = []
    for i, data in enumerate(raw):
        label = f"{prefix}[{i}]"
        try:
            items.append((label, from_openai(data)))
        except MessageFormatError as exc:
            raise ImportFormatError(path, label, str(exc)) from exc
    system: SystemMessage | None = None
    if items and isinstance(items[0][1], SystemMessage):
        system = items[0][1]
        items = items[1:]
    return group_steps(path, items, system=system)


def as_outcome(path: str, label: str, value: Any) -> float | None:
    """A recorded outcome as a float (booleans as 1.0/0.0); None when absent."""
    if value is None:
        return None
    if isinstance(value, bool | int | float):
        return float(value)
    raise ImportFormatError(path, label, f"outcome must be a number, got {_kind(value)}")


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__
