"""Outputs that repeat one the view shows in full, stubbed as they arrive.

A repeat stubbed when it first enters the view never entered the cache, so removing it rewrites
nothing: the saving is free under any price table, and ``restore(step=N)`` brings it back
verbatim.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import NamedTuple

from contextfold.core.history import History, Step
from contextfold.core.messages import ToolMessage
from contextfold.core.view import Elision, Provenance, RestorePath
from contextfold.strategies.refold.entries import Entry

__all__ = ["Repeats", "repeat_stub"]


def repeat_stub(step: int, source: int, original: ToolMessage) -> ToolMessage:
    """The stub of an output of ``step`` that repeats the one of ``source`` (also dedup's, at
    the boundary: :mod:`.prefix`)."""
    text = f"[step {step}] same output as step {source}; {RestorePath.step(step)} shows it"
    return ToolMessage(text, original.tool_call_id, name=original.name)


class _Repeat(NamedTuple):
    source: int
    """The step whose output it repeats."""
    stub: ToolMessage
    tokens: int
    """The stub's tokens."""
    elision: Elision


@dataclass(slots=True)
class Repeats:
    """The repeats found so far, and the outputs they point at (one instance per session).

    An agent that makes the same call again (a search repeated, a record looked up twice, a file
    read again unchanged) gets the same text back. The earlier copy is then never masked or
    superseded by its repeat (refold keeps it in full: the agent reads the text there; a later
    different output of the same call supersedes it as usual), and the stub stays the same when the
    boundary passes the repeat, so the prefix does not change either. Only whole outputs repeat
    (runs of lines that repeat are span dedup's, at the boundary), and only one the view shows in
    full at that moment (in the tail, or whole in the settled prefix); a stub no shorter than the
    output is not used.
    """

    kept: set[int] = field(default_factory=set)
    """Steps a repeat points at: shown in full from then on."""
    _found: dict[tuple[int, str], _Repeat] = field(default_factory=dict)
    """(step, tool call id) of each repeat."""
    _texts: dict[str, list[int]] = field(default_factory=dict)
    """Output text -> the steps that showed it in full, in order."""

    def pointed(self, step: int) -> set[int]:
        """The steps whose outputs ``step``'s repeats point at (none: not a repeat)."""
        return {r.source for (s, _), r in self._found.items() if s == step}

    def stub(self, step: int, call_id: str) -> ToolMessage | None:
        """The stub of the output of ``step`` answering ``call_id``, if it is a repeat."""
        found = self._found.get((step, call_id))
        return found.stub if found else None

    def find(self, step: Step, history: History, shown: Collection[int], boundary: int) -> None:
        """Take in a new step: an output that repeats one shown in full (a step in ``shown``,
        the outputs the settled prefix shows whole, or at or after ``boundary``) becomes a
        repeat; any other is recorded as shown."""
        for message, tokens in zip(step.messages, step.tokens, strict=True):
            if not isinstance(message, ToolMessage) or not message.content:
                continue
            found = self._repeat(step.index, message, tokens, history, shown, boundary)
            if found is None:
                self._texts.setdefault(message.content, []).append(step.index)
                continue
            self._found[(step.index, message.tool_call_id)] = found
            self.kept.add(found.source)

    def _repeat(
        self,
        step: int,
        message: ToolMessage,
        tokens: int,
        history: History,
        shown: Collection[int],
        boundary: int,
    ) -> _Repeat | None:
        """``message`` of ``step`` as a repeat, unless no earlier output shown in full is the
        same or the stub would be no shorter."""
        source = self._source(message.content, step, shown, boundary)
        if source is None:
            return None
        stub = repeat_stub(step, source, message)
        kept = history.count(stub)
        if kept >= tokens:
            return None
        elision = Elision((step,), "repeat", tokens - kept, RestorePath.step(step))
        return _Repeat(source, stub, kept, elision)

    def _source(self, text: str, step: int, shown: Collection[int], boundary: int) -> int | None:
        for earlier in reversed(self._texts.get(text, ())):
            if earlier < step and (earlier >= boundary or earlier in shown):
                return earlier
        return None

    def entry(self, step: int, entry: Entry) -> Entry | None:
        """The stub standing in for ``entry`` of ``step`` when it is a repeat."""
        message, _, provenance = entry
        if not isinstance(message, ToolMessage):
            return None
        found = self._found.get((step, message.tool_call_id))
        if found is None:
            return None
        return found.stub, found.tokens, Provenance(provenance.steps, "transformed")

    def after(self, boundary: int) -> list[Elision]:
        """The elisions of the repeats at or after ``boundary`` (shown in the tail)."""
        return [r.elision for (step, _), r in self._found.items() if step >= boundary]
