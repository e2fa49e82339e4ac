"""One trajectory through one strategy, step by step, as a live run would go: folds, renders,
the restore and re-run calls a live agent would make, and each call metered."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from contextfold.bench.restores import RestorePricing
from contextfold.core.folds import FoldRecord
from contextfold.core.history import History, Step
from contextfold.core.meter import Meter
from contextfold.core.protocols import Folding, Learning, Strategy
from contextfold.core.tokens import TokenCounter
from contextfold.core.view import View, render_and_check
from contextfold.importers.base import Trajectory

__all__ = ["replay_one"]


def replay_one(
    traj: Trajectory,
    steps: Sequence[Step],
    strategy: Strategy,
    meter: Meter,
    *,
    counter: TokenCounter,
    budget: int | None = None,
    on_fold: Callable[[FoldRecord], None] | None = None,
    check: Callable[[int, View], None] | None = None,
    restores: RestorePricing | None = None,
) -> History:
    """Replay one trajectory through one strategy into ``meter``; returns the final history.
    ``check`` sees each view with the index of the recorded step it was rendered for;
    ``restores`` checks it too, and makes the restore and re-run calls it calls for before
    that step."""
    run = _Run(History(traj.system, counter=counter), strategy, meter, budget, on_fold)
    history = run.history
    for step in steps:
        if step.kind == "assistant":
            view, elapsed = run.render()
            if check is not None:
                check(step.index, view)
            if restores is not None:
                view, elapsed = run.recover(step.index, view, elapsed, restores)
            meter.record_call(view, completion_tokens=step.tokens[0], render_ns=elapsed)
        run.append(restores.place(step, history) if restores is not None else step)
    if isinstance(strategy, Learning):
        strategy.end(history)
    return history


@dataclass(frozen=True, slots=True)
class _Run:
    """One strategy's replay of one trajectory in progress."""

    history: History
    strategy: Strategy
    meter: Meter
    budget: int | None
    on_fold: Callable[[FoldRecord], None] | None

    def render(self) -> tuple[View, int]:
        return _render(self.strategy, self.history, self.meter, self.budget, self.on_fold)

    def append(self, step: Step) -> None:
        self.history.append_step(step)
        self.strategy.observe(step, self.history)

    def recover(
        self, index: int, view: View, elapsed: int, restores: RestorePricing
    ) -> tuple[View, int]:
        """Before recorded step ``index``: the restore call, then the re-run call, that its
        view calls for; returns the view the recorded call is made on."""
        found = restores.tally.check(index, view)
        restore = restores.restore(index, found, view, self.history, self.strategy)
        if restore is not None:
            view, elapsed = self._call(view, elapsed, [restore], restores, rerun=False)
        reruns = restores.rerun(index, found, self.history)
        if reruns:
            view, elapsed = self._call(view, elapsed, reruns, restores, rerun=True)
        return view, elapsed

    def _call(
        self, view: View, elapsed: int, made: list[Step], restores: RestorePricing, *, rerun: bool
    ) -> tuple[View, int]:
        """One call on ``view`` whose completion is the head of ``made``, metered and paid;
        the steps it made appended and observed; the view rendered again."""
        record = self.meter.record_call(
            view, completion_tokens=made[0].tokens[0], render_ns=elapsed
        )
        restores.paid(record, rerun=rerun)
        for step in made:
            self.append(step)
        return self.render()


def _render(
    strategy: Strategy,
    history: History,
    meter: Meter,
    budget: int | None,
    on_fold: Callable[[FoldRecord], None] | None,
) -> tuple[View, int]:
    """Fold (for a strategy that folds with a model: timed apart), then render: the view and
    the render time in nanoseconds."""
    if isinstance(strategy, Folding):
        records = strategy.fold(history, budget)
        meter.record_folds(records)
        if on_fold is not None:
            for record in records:
                on_fold(record)
    start = time.perf_counter_ns()
    # the budget is a hint, never enforced, so every strategy replays every recorded call
    # (a live run enforces it)
    view = render_and_check(strategy, history, budget)
    return view, time.perf_counter_ns() - start
