"""Runs: when even the settled prefix is over the budget, consecutive settled steps fold into one
line, so any history fits a budget that holds the system prompt, the task and the window.

Only a budget forces a run (:mod:`.boundary`), once the window is all it shows in full: the oldest
settled steps fold first, the task (the first user message) and the latest user message never,
with slack (:data:`SLACK`) so that the next calls do not fold again at once. Each step of a run
stays restorable: ``restore(step=N)`` (its outputs, a user's text), ``part='text'|'calls'``.
"""

from __future__ import annotations

from collections.abc import Sequence

from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage
from contextfold.core.view import Elision, Provenance, RestorePath, ViewBuilder
from contextfold.strategies.refold.policy import text_path

__all__ = ["RUN", "SLACK", "Runs"]

RUN = "run"
"""The elision reason of a step folded into a run."""

SLACK = 10
"""A fold frees the excess and a ``1/SLACK`` share of the budget more."""

_LINE = "[steps {a}-{b} folded] restore(step=N) gives step N back (part='text': its text, "
_LINE += "part='calls': its calls)"


class Runs:
    """The settled steps folded into runs, and the block each of them renders as."""

    def __init__(self, history: History) -> None:
        self.history = history
        self.folded: set[int] = set()
        self._blocks: dict[int, ViewBuilder] = {}

    def blocks(self, steps: Sequence[ViewBuilder]) -> Sequence[ViewBuilder]:
        """``steps`` (each settled step's rendering) with the folded ones as their runs."""
        if not self.folded:
            return steps
        return [self._blocks.get(i, block) for i, block in enumerate(steps)]

    def fold(
        self, step_tokens: Sequence[int], excess: int, *, slack: int, anyway: bool
    ) -> int | None:
        """Fold settled steps, oldest first, until about ``excess`` and ``slack`` tokens more
        are freed (``step_tokens``: each settled step's tokens as shown, less what stays).
        Unless ``anyway``, only when the steps that may fold hold the ``excess`` and a line.
        Returns the first step whose rendering changed, or None when nothing folded."""
        keep = self._kept()
        free = [i for i in range(len(step_tokens)) if i not in self.folded and i not in keep]
        line = self.history.count(AssistantMessage(_LINE.format(a=len(step_tokens), b=0)))
        if not free or (not anyway and sum(step_tokens[i] for i in free) - line < excess):
            return None
        freed, added = 0, []
        for i in free:
            if freed >= excess + slack:
                break
            added.append(i)
            freed += step_tokens[i]
        self.folded.update(added)
        starts = self._rebuild()
        return min(next(a for a in starts if a <= i) for i in added)

    def _kept(self) -> set[int]:
        """The steps that never fold: the task (the first user message), the latest user one."""
        steps = self.history.steps
        task = next((s.index for s in steps if s.kind == "user"), None)
        return {i for i in (task, self.history.latest_user_index) if i is not None}

    def _rebuild(self) -> list[int]:
        """The blocks of every run (maximal stretches of folded steps); their first steps."""
        self._blocks, starts = {}, []
        for a, b in _stretches(sorted(self.folded)):
            starts.append(a)
            for i in range(a, b + 1):
                self._blocks[i] = self._block(i, a, b)
        return sorted(starts, reverse=True)

    def _block(self, i: int, a: int, b: int) -> ViewBuilder:
        out = ViewBuilder()
        line = 0
        if i == a:
            message = AssistantMessage(_LINE.format(a=a, b=b))
            line = self.history.count(message)
            out.add(message, line, Provenance(tuple(range(a, b + 1)), "transformed"))
        for elision in _elisions(self.history, i):
            out.elide(Elision(elision.steps, RUN, max(elision.tokens - line, 0), elision.restore))
            line = 0  # the line stands in for the first piece only
        return out


def _elisions(history: History, i: int) -> list[Elision]:
    """What folding step ``i`` leaves out, each piece with the path that brings it back."""
    step = history[i]
    head, *outputs = step.tokens
    message = step.message
    if not isinstance(message, AssistantMessage):  # a user's text: restore(step=N) gives it
        return [Elision((i,), RUN, head, RestorePath.step(i))]
    text = bool((message.content or "").strip())
    pieces = [Elision((i,), RUN, sum(outputs), RestorePath.step(i))] if outputs else []
    if message.tool_calls:
        calls = RestorePath("restore", (("step", i), ("part", "calls")))
        pieces.append(Elision((i,), RUN, 0 if text else head, calls))
    if text or not pieces:
        pieces.append(Elision((i,), RUN, head, text_path(i)))
    return pieces


def _stretches(steps: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted step indices as (first, last) of each stretch of consecutive ones."""
    out: list[tuple[int, int]] = []
    for s in steps:
        if out and s == out[-1][1] + 1:
            out[-1] = (out[-1][0], s)
        else:
            out.append((s, s))
    return out
