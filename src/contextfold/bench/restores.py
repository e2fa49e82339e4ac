"""Restore pricing: replay pays for what a live agent would do to get back what a view left out.

A value a recorded call needs that the view left out but can give back is restored first, with a
model call of its own, as a live agent would; without it, a strategy that removes much and
restores often would look cheaper than it is. A value the view lost is got again the same way,
by a re-run (:mod:`~contextfold.bench.reruns`); :class:`RestorePricing` makes both.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from contextfold.bench.availability import ArgTally, Found, Wanted
from contextfold.bench.reruns import choose_reruns, rerun_steps
from contextfold.core.driver import Driver
from contextfold.core.history import History, Step, make_step
from contextfold.core.messages import AssistantMessage, ToolCall, ToolMessage
from contextfold.core.meter import CallRecord
from contextfold.core.prepared import PreparedText, value_runs
from contextfold.core.view import RestorePath, View
from contextfold.strategies.restore import restore_text

__all__ = ["RestorePricing", "choose_restores", "restore_step"]


@dataclass(slots=True)
class RestorePricing:
    """Checks one strategy's views of one trajectory (:class:`ArgTally`) and makes the restore
    calls (when ``priced``) and the re-run calls (when ``reruns_priced``) they call for.

    Before each recorded call, :class:`~contextfold.bench.availability.ArgTally` checks the view
    the strategy rendered. For a value not in view that an elision can give back, the **restore
    call** sends the view as rendered and a short completion (its tokens counted), and its step
    (the assistant's restore calls and the results the loop step answers them with,
    :meth:`~contextfold.core.driver.Driver.call_tool`) is appended to the history.
    For a value the view lost, the **re-run call** does the same with the steps of
    :func:`~contextfold.bench.reruns.rerun_steps` (the tool called again, its recorded output
    whole). The strategy observes each step and renders again, and the recorded call is made
    on that view. From then on the text brought back is in the history like any tool's result,
    kept or not as the strategy keeps it.
    """

    tally: ArgTally
    priced: bool = True
    reruns_priced: bool = True
    calls: int = 0
    """Restore calls made."""
    cost_usd: float = 0.0
    """What they cost (each its prompt, the view as rendered, and its short completion)."""
    reruns: int = 0
    """Re-run calls made."""
    rerun_cost_usd: float = 0.0
    """What they cost (each its prompt, the view as rendered, and the calls it makes)."""

    def restore(self, index: int, found: Found, view: View, driver: Driver) -> Step | None:
        """The restore step to append before recorded step ``index`` for what ``found`` says
        its view can give back (None: nothing to restore, or not priced)."""
        if not (found.restorable and self.priced):
            return None
        chosen = choose_restores(found.restorable, view, driver.history)
        pieces = [p for p in chosen if driver.offers(p.path.tool)]
        if not pieces:
            return None
        step = restore_step([p.path for p in pieces], driver, call=index)
        for piece in pieces:
            self.tally.places.restored.setdefault(piece.step, []).append(step.index)
        return step

    def rerun(self, index: int, found: Found, history: History) -> list[Step]:
        """The steps to append before recorded step ``index`` that get back what ``found``
        says its view lost (none: nothing lost, or re-runs not priced)."""
        if not (found.lost and self.reruns_priced):
            return []
        sources = choose_reruns(found.lost, self.tally.places, history)
        if not sources:
            return []
        steps = rerun_steps(sources, history, call=index)
        for source in sources:
            copy = steps[0] if isinstance(source.message, ToolMessage) else steps[-1]
            self.tally.places.restored.setdefault(source.step, []).append(copy.index)
        return steps

    def paid(self, record: CallRecord, *, rerun: bool = False) -> None:
        """Account the restore (or re-run) call the meter recorded."""
        if rerun:
            self.reruns += 1
            self.rerun_cost_usd += record.cost_usd
        else:
            self.calls += 1
            self.cost_usd += record.cost_usd

    def place(self, step: Step, history: History) -> Step:
        """The recorded ``step`` as the next step of ``history`` (restores shift the index)."""
        if step.index == len(history):
            return step
        self.tally.places.shift[step.index] = len(history)
        return replace(step, index=len(history))

    def row(self) -> dict[str, float | int]:
        return {
            "restores": self.calls,
            "restore_cost_usd": self.cost_usd,
            "reruns": self.reruns,
            "rerun_cost_usd": self.rerun_cost_usd,
        }


@dataclass(frozen=True, slots=True)
class _Piece:
    path: RestorePath
    step: int
    text: PreparedText | None
    """What the path answers (None: not read, taken to give back its steps)."""
    size: int


def choose_restores(wanted: Sequence[Wanted], view: View, history: History) -> list[_Piece]:
    """The pieces an agent restores to get every ``wanted`` value back.

    For each value in turn, unless a piece already chosen for this call gives it back, the piece
    that gives it back in the fewest characters (an elision's restore path over a step holding it;
    the latest step on a tie), as an agent that knows what it is looking for would pick the stub
    that holds it. What a ``restore`` path would answer is read from the history
    (:func:`~contextfold.strategies.restore.restore_text`, which has no side effects); another
    tool's path (``recall``) is taken to give back the steps it covers.
    """
    pieces = _pieces(view, history)
    chosen: list[_Piece] = []
    for want in wanted:
        runs = value_runs(want.value)
        if any(_gives(p, want, runs) for p in chosen):
            continue
        fits = [p for p in pieces if _gives(p, want, runs)]
        if fits:
            chosen.append(min(fits, key=lambda p: (p.size, -p.step)))
    return chosen


def _pieces(view: View, history: History) -> list[_Piece]:
    """Each distinct restore path of the view's elisions, with what it answers."""
    paths = {e.restore: e.steps[0] for e in view.elisions if e.restore is not None and e.steps}
    out = []
    for path, step in paths.items():
        if path.tool == "restore":
            text, found = restore_text(path.as_dict(), history)
            if found is not None:
                out.append(_Piece(path, found, PreparedText(text), len(text)))
        else:
            out.append(_Piece(path, step, None, sum(len(r.content) for r in history[step].results)))
    return out


def _gives(piece: _Piece, want: Wanted, runs: frozenset[bytes]) -> bool:
    if piece.step not in want.steps:
        return False
    return piece.text is None or piece.text.holds(want.value, runs)


def restore_step(paths: Sequence[RestorePath], driver: Driver, *, call: int) -> Step:
    """The next step of the driver's history: one assistant message calling every path (each
    a tool the strategy offers), and the answers
    (:meth:`~contextfold.core.driver.Driver.answer`; ``call``: the recorded step it comes
    before, for the call ids)."""
    history = driver.history
    calls = tuple(
        ToolCall(f"replay-restore-{call}-{k}", p.tool, json.dumps(p.as_dict()))
        for k, p in enumerate(paths)
    )
    results = [
        ToolMessage(driver.answer(c.name, p.as_dict()), c.id, name=c.name)
        for c, p in zip(calls, paths, strict=True)
    ]
    return make_step(
        len(history), [AssistantMessage(None, tool_calls=calls), *results], history.counter
    )
