"""A conversation as a caller resends it every call: parsed, checked against what the session
holds, and its new steps found.

The session's history is append-only, so the conversation must begin with everything the
session was given before, unchanged; :func:`new_steps` names the first position that differs
otherwise (an assistant message's content None and "" are the same message). :class:`Seen`
keeps each message as the caller first gave it, in a copy the caller cannot change, so a
message resent unchanged is recognised by one comparison instead of being parsed again.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel

from contextfold.core.errors import HistoryError, MessageFormatError
from contextfold.core.grouping import Grouped, Labeled, as_message
from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage, Message

__all__ = ["REWRITE_HINT", "Seen", "new_steps"]

REWRITE_HINT = (
    "a Session's history is append-only: resend the whole conversation with its earlier "
    "messages as they were (the session does the trimming), or start a new Session for "
    "another conversation"
)


@dataclass(slots=True)
class Seen:
    """The messages of the previous call, as given (snapshots) and as parsed."""

    snapshots: list[Any] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)

    def parse(self, raw: Sequence[Any]) -> list[Labeled]:
        """Each message labelled ``messages[i]``; one resent unchanged is the message parsed
        before (the same object), the others are parsed (an error names the position)."""
        out: list[Labeled] = []
        known = len(self.messages)
        for i, item in enumerate(raw):
            label = f"messages[{i}]"
            if i < known and _unchanged(item, self.snapshots[i]):
                out.append((label, self.messages[i]))
                continue
            try:
                out.append((label, as_message(item)))
            except MessageFormatError as exc:
                raise exc.under(label) from None
        return out

    def remember(self, raw: Sequence[Any], parsed: Sequence[Labeled]) -> None:
        """Keep this call's messages for the next one (after they were accepted)."""
        snapshots, messages = [], []
        for i, (item, (_, message)) in enumerate(zip(raw, parsed, strict=True)):
            same = i < len(self.messages) and self.messages[i] is message
            snapshots.append(self.snapshots[i] if same else _snapshot(item))
            messages.append(message)
        self.snapshots, self.messages = snapshots, messages


def _snapshot(item: Any) -> Any:
    if isinstance(item, BaseModel):
        return item.model_dump(exclude_none=True)
    if isinstance(item, dict):
        return copy.deepcopy(item)
    return item  # a Message: frozen


def _unchanged(item: Any, snapshot: Any) -> bool:
    if isinstance(item, BaseModel):
        item = item.model_dump(exclude_none=True)
    return type(item) is type(snapshot) and bool(item == snapshot)


def new_steps(history: History, grouped: Grouped) -> tuple[tuple[Message, ...], ...]:
    """The steps of ``grouped`` that ``history`` does not hold yet; raises
    :class:`~contextfold.core.errors.HistoryError` naming the first position that differs from
    what the history holds."""
    if history.system != grouped.system:
        where = "messages[0]" if grouped.system is not None else "messages"
        raise HistoryError(
            f"{where}: the system message differs from the one this session started with; "
            + REWRITE_HINT
        )
    held, steps = len(history), grouped.steps
    for i in range(min(held, len(steps))):
        old = history[i].messages
        if steps[i] == old:  # the same objects when resent unchanged: compared in C
            continue
        differ = [j for j, m in enumerate(steps[i]) if j >= len(old) or not _same(m, old[j])]
        if differ or len(steps[i]) != len(old):
            label = grouped.labels[i][differ[0] if differ else -1]
            raise HistoryError(
                f"{label}: differs from the message this session was given before (its "
                f"step {i}); {REWRITE_HINT}"
            )
    if len(steps) < held:
        raise HistoryError(
            f"messages: {len(steps)} steps, fewer than the {held} this session already holds "
            f"(messages were removed); {REWRITE_HINT}"
        )
    return steps[held:]


def _same(a: Message, b: Message) -> bool:
    """Equal, an assistant message's content None and "" taken as the same."""
    if a == b:
        return True
    if isinstance(a, AssistantMessage) and isinstance(b, AssistantMessage):
        return replace(a, content=a.content or None) == replace(b, content=b.content or None)
    return False
