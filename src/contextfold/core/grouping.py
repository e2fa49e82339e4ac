"""Grouping chat messages into the steps a History holds: the one grouper of the library.

:class:`~contextfold.session.Session`, the proxy and the importers all group here, so a
conversation becomes the same steps whichever way it arrives, and every error names its place in
the caller's input (``messages[3].tool_calls[0].function.arguments``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeAlias

from pydantic import BaseModel

from contextfold.core.errors import MessageFormatError
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
    from_openai,
)

__all__ = ["Grouped", "Labeled", "as_message", "group_steps", "parse_messages"]

Labeled: TypeAlias = tuple[str, Message]
"""A message with its position in the caller's input."""

_KINDS = (SystemMessage, UserMessage, AssistantMessage, ToolMessage)


@dataclass(frozen=True, slots=True)
class Grouped:
    """Messages grouped into steps (and the system message, where there was one)."""

    system: SystemMessage | None
    steps: tuple[tuple[Message, ...], ...]
    labels: tuple[tuple[str, ...], ...] = ()
    """The label of each message of each step (parallel to ``steps``)."""
    dropped_calls: int = 0
    """Unanswered tool calls dropped from the final assistant message (lenient only)."""


def as_message(raw: Any) -> Message:
    """A :class:`~contextfold.core.messages.Message` as it is; an OpenAI chat dict, or a
    message object of the openai SDK (a pydantic model), parsed."""
    if isinstance(raw, _KINDS):
        return raw
    if isinstance(raw, BaseModel):
        raw = raw.model_dump(exclude_none=True)
    elif not isinstance(raw, Mapping):
        raise MessageFormatError(
            "a message must be an OpenAI chat message (a dict or an openai SDK message "
            f"object) or a contextfold Message, got {type(raw).__name__}"
        )
    return from_openai(raw)


def parse_messages(raw: Iterable[Any], prefix: str = "messages") -> list[Labeled]:
    """Each message parsed (:func:`as_message`) and labelled ``{prefix}[i]``; an error names
    the message and the field."""
    out: list[Labeled] = []
    for i, item in enumerate(raw):
        label = f"{prefix}[{i}]"
        try:
            out.append((label, as_message(item)))
        except MessageFormatError as exc:
            raise exc.under(label) from None
    return out


def group_steps(
    items: Sequence[Labeled], *, system: SystemMessage | None = None, lenient: bool = False
) -> Grouped:
    """Split labelled messages into steps (:func:`group_steps`). A leading system
    message becomes the system message unless ``system`` is given.

    A user message is a step; an assistant message and the tool results answering its calls are a
    step; a leading system message belongs to the history itself. Each message carries a label
    naming its place in the caller's input (``messages[3]``, ``simulations[0].messages[12]``);
    errors are :class:`~contextfold.core.errors.MessageFormatError` s whose ``at`` names it.

    Strict (the default; what a client resends and what a model call needs): the results follow
    right after the assistant message that called them, in one run, in any order, and every call is
    answered. Lenient (recorded runs that ended mid-step): the calls of the last assistant message
    still unanswered when the conversation ends are dropped, and counted.
    """
    if system is None and items and isinstance(items[0][1], SystemMessage):
        system, items = items[0][1], items[1:]
    grouper = _Grouper()
    for label, message in items:
        grouper.add(label, message)
    return grouper.done(system, lenient=lenient)


@dataclass(slots=True)
class _Grouper:
    steps: list[list[Message]] = field(default_factory=list)
    labels: list[list[str]] = field(default_factory=list)
    pending: set[str] = field(default_factory=set)
    """Calls of the current step's assistant message not answered yet."""

    def add(self, label: str, message: Message) -> None:
        if isinstance(message, ToolMessage):
            self._answer(label, message)
            return
        if self.pending:
            raise MessageFormatError(
                f"tool calls {sorted(self.pending)} get no result before {label}",
                at=self.labels[-1][0],
            )
        if isinstance(message, SystemMessage):
            raise MessageFormatError(
                "a system message inside the conversation (only a leading system message is "
                "supported)",
                at=label,
            )
        self.steps.append([message])
        self.labels.append([label])
        if isinstance(message, AssistantMessage):
            self.pending = _call_ids(label, message)

    def _answer(self, label: str, message: ToolMessage) -> None:
        if message.tool_call_id not in self.pending:
            raise MessageFormatError(
                f"tool result for call {message.tool_call_id!r} answers no unanswered call; a "
                "tool message must follow the assistant message whose call it answers",
                at=label,
            )
        self.pending.discard(message.tool_call_id)
        self.steps[-1].append(message)
        self.labels[-1].append(label)

    def done(self, system: SystemMessage | None, *, lenient: bool) -> Grouped:
        dropped = len(self.pending)
        if self.pending:
            if not lenient:
                raise MessageFormatError(
                    f"tool calls {sorted(self.pending)} get no result (the conversation ends "
                    "before they are answered)",
                    at=self.labels[-1][0],
                )
            self.steps[-1][0] = _without(self.steps[-1][0], self.pending)
        return Grouped(
            system,
            tuple(tuple(s) for s in self.steps),
            tuple(tuple(s) for s in self.labels),
            dropped,
        )


def _call_ids(label: str, message: AssistantMessage) -> set[str]:
    seen: set[str] = set()
    for k, call in enumerate(message.tool_calls):
        if call.id in seen:
            raise MessageFormatError(
                f"the assistant repeats the tool call id {call.id!r}",
                at=f"{label}.tool_calls[{k}].id",
            )
        seen.add(call.id)
    return seen


def _without(message: Message, unanswered: set[str]) -> Message:
    assert isinstance(message, AssistantMessage)
    kept = tuple(c for c in message.tool_calls if c.id not in unanswered)
    return replace(message, tool_calls=kept)
