"""The steps after refold's boundary, shown in full, and the head of its view.

Until refold first folds, the tail is the history as recorded, but for outputs that repeat one
the view shows (:mod:`.repeats`: stubbed as they arrive). From the first advance on, each
tool output from the first step it changes on is labelled ``[step N]`` (so that stubs and
restores can point at it), rendered once per step and kept; a note before that step asks for the
PROGRESS/STALE markers. The outputs before it stay as recorded, so the cache keeps them.
"""

from __future__ import annotations

from contextfold.core.history import History
from contextfold.core.messages import UserMessage
from contextfold.core.view import SYSTEM_PROVENANCE, Provenance
from contextfold.strategies.refold.entries import Entries, Entry
from contextfold.strategies.refold.markers import INSTRUCTIONS
from contextfold.strategies.refold.prefix import labelled
from contextfold.strategies.refold.repeats import Repeats

__all__ = ["Tail", "head", "note"]


def head(history: History) -> tuple[Entry, ...]:
    """The system message, as it is."""
    sys = history.system
    return ((sys, history.system_tokens, SYSTEM_PROVENANCE),) if sys else ()


def note(history: History) -> Entry:
    """The marker instructions as a note from the runtime (the system message is left as it
    is: changing it would write the whole prompt to the cache again)."""
    message = UserMessage(INSTRUCTIONS)
    return message, history.count(message), Provenance((), "synthetic")


class Tail:
    """Renders steps in full, each step's rendering (labelled or not) and its token sum cached
    until :meth:`forget`, so weighing an advance at every call stays cheap."""

    def __init__(self, history: History, repeats: Repeats) -> None:
        self.history, self.repeats = history, repeats
        self._rendered: dict[tuple[int, bool], list[Entry]] = {}
        self._sums: dict[tuple[int, bool], int] = {}

    def entries(self, start: int, end: int, source: Entries, *, labels: bool) -> list[Entry]:
        out: list[Entry] = []
        for index in range(start, end):
            out.extend(self._step(index, source, labels))
        return out

    def tokens(self, start: int, end: int, source: Entries, *, labels: bool) -> int:
        total = 0
        for index in range(start, end):
            key = (index, labels)
            tokens = self._sums.get(key)
            if tokens is None:
                tokens = self._sums[key] = sum(e[1] for e in self._step(index, source, labels))
            total += tokens
        return total

    def _step(self, index: int, source: Entries, labels: bool) -> list[Entry]:
        key = (index, labels)
        rendered = self._rendered.get(key)
        if rendered is None:
            rendered = [self._entry(index, e, labels) for e in source(index)]
            self._rendered[key] = rendered
        return rendered

    def _entry(self, index: int, entry: Entry, labels: bool) -> Entry:
        stub = self.repeats.entry(index, entry)
        if stub is not None:
            return stub
        return labelled(index, entry, self.history) if labels else entry

    def forget(self, before: int | None = None) -> None:
        """Drop the cached renderings of steps before ``before`` (all when None)."""
        if before is None:
            self._rendered.clear()
            self._sums.clear()
        else:
            self._rendered = {k: e for k, e in self._rendered.items() if k[0] >= before}
            self._sums = {k: n for k, n in self._sums.items() if k[0] >= before}
