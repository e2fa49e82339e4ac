"""Outputs that repeat one the view shows in full, stubbed as they arrive.

An agent that makes the same call again (a search repeated, a record looked up twice, a file read
again unchanged) gets the same text back. Shown again in full, the copy costs its tokens at every
later call; stubbed when it first enters the view, it never entered the cache, so removing it
rewrites nothing: the saving is free under any price table. The stub names the earlier step and
``restore(step=N)`` brings the repeat back verbatim. The earlier copy is then never masked or
superseded by its repeat (refold keeps it in full: the agent reads the text there; a later
different output of the same call supersedes it as usual), and the stub
stays the same when the boundary passes the repeat, so the prefix does not change either.

Only whole outputs repeat (runs of lines that repeat are span dedup's, at the boundary), and only
one the view shows in full at that moment: an output in the tail, or one the settled prefix shows
whole; a stub no shorter than the output is not used.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from contextfold.core.history import History, Step
from contextfold.core.messages import ToolMessage
from contextfold.core.view import Elision, Provenance, RestorePath
from contextfold.strategies.refold.prefix import Entry, repeat_stub

__all__ = ["Repeats"]


@dataclass(slots=True)
class Repeats:
    """The repeats found so far, and the outputs they point at (one instance per session)."""

    sources: dict[tuple[int, str], int] = field(default_factory=dict)
    """(step, tool call id) of a repeat -> the step whose output it repeats."""
    elisions: dict[tuple[int, str], Elision] = field(default_factory=dict)
    kept: set[int] = field(default_factory=set)
    """Steps a repeat points at: shown in full from then on."""
    _texts: dict[str, list[int]] = field(default_factory=dict)
    """Output text -> the steps that showed it in full, in order."""
    _steps: dict[int, set[int]] = field(default_factory=dict)
    """Step of a repeat -> the steps its outputs repeat."""

    def pointed(self, step: int) -> set[int]:
        """The steps whose outputs ``step``'s repeats point at (none: not a repeat)."""
        return self._steps.get(step, set())

    def find(self, step: Step, history: History, shown: Collection[int], boundary: int) -> None:
        """Take in a new step: an output that repeats one shown in full (a step in ``shown``,
        the outputs the settled prefix shows whole, or at or after ``boundary``) becomes a
        repeat; any other is recorded as shown."""
        for message, tokens in zip(step.messages, step.tokens, strict=True):
            if not isinstance(message, ToolMessage) or not message.content:
                continue
            source = self._source(message.content, step.index, shown, boundary)
            stub = None if source is None else repeat_stub(step.index, source, message)
            kept = history.count(stub) if stub is not None else tokens
            if source is None or kept >= tokens:
                self._texts.setdefault(message.content, []).append(step.index)
                continue
            key = (step.index, message.tool_call_id)
            self.sources[key] = source
            self._steps.setdefault(step.index, set()).add(source)
            self.kept.add(source)
            restore = RestorePath.step(step.index)
            self.elisions[key] = Elision((step.index,), "repeat", tokens - kept, restore)

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
        key = (step, message.tool_call_id)
        source = self.sources.get(key)
        if source is None:
            return None
        stub = repeat_stub(step, source, message)
        tokens = entry[1] - self.elisions[key].tokens
        return stub, tokens, Provenance(provenance.steps, "transformed")

    def after(self, boundary: int) -> list[Elision]:
        """The elisions of the repeats at or after ``boundary`` (shown in the tail)."""
        return [e for (step, _), e in self.elisions.items() if step >= boundary]
