"""One trajectory through one strategy, step by step, as a live run would go: folds, renders,
the restore and re-run calls a live agent would make, and each call metered."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from contextfold.bench.restores import RestorePricing
from contextfold.core.driver import Driver
from contextfold.core.folds import FoldRecord
from contextfold.core.history import History, Step
from contextfold.core.meter import CallRecord, Meter
from contextfold.core.protocols import Strategy
from contextfold.core.tokens import TokenCounter
from contextfold.core.view import View
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
    that step.

    Each step is the loop step a live run takes (:class:`~contextfold.core.driver.Driver`),
    with one difference: the budget is a hint, never enforced, so every strategy replays
    every recorded call (a live run enforces it). A fold's records are metered apart, and its
    time is not render time. Each call is metered at the time the log says it was made (a
    restore or re-run call just before it), its completion the meter's count of the recorded
    reply (the billed output where the log has it). The strategy is told the tokens each
    prompt holds that the history does not (:attr:`~contextfold.core.meter.Meter.
    unseen_tokens`), as serve's strategies see a client's system prompt."""

    def folded(record: FoldRecord) -> None:
        meter.record_folds((record,))
        if on_fold is not None:
            on_fold(record)

    history = History(traj.system, counter=counter, unseen_tokens=meter.unseen_tokens)
    run = _Run(Driver(strategy, history, budget=budget, fit=False, on_fold=folded), meter)
    calls = 0
    for step in steps:
        if step.kind == "assistant":
            run.at = traj.calls[calls].at if calls < len(traj.calls) else None
            view, elapsed = run.render()
            if check is not None:
                check(step.index, view)
            if restores is not None:
                view, elapsed = run.recover(step.index, view, elapsed, restores)
            run.call(view, elapsed, step, calls)
            calls += 1
        run.driver.append_step(restores.place(step, history) if restores is not None else step)
    run.driver.end()
    return history


@dataclass(slots=True)
class _Run:
    """One strategy's replay of one trajectory in progress."""

    driver: Driver
    meter: Meter
    at: float | None = None
    """When the recorded call being replayed was made."""

    def call(self, view: View, elapsed: int, made: Step, recorded: int | None) -> CallRecord:
        """Meter one call on ``view`` whose completion is ``made`` (recorded call
        ``recorded``, or None for a call replay adds)."""
        counting = self.meter.counting
        reply = counting.reply(made.messages[0], made.tokens[0])
        completion = counting.calibration.output(recorded, reply)
        return self.meter.record_call(
            view, completion_tokens=completion, render_ns=elapsed, at=self.at
        )

    def render(self) -> tuple[View, int]:
        """Fold what is due, then render: the view and the render time in nanoseconds."""
        rendered = self.driver.prepare()
        return rendered.view, rendered.render_ns

    def recover(
        self, index: int, view: View, elapsed: int, restores: RestorePricing
    ) -> tuple[View, int]:
        """Before recorded step ``index``: the restore call, then the re-run call, that its
        view calls for; returns the view the recorded call is made on."""
        found = restores.tally.check(index, view)
        restore = restores.restore(index, found, view, self.driver)
        if restore is not None:
            view, elapsed = self._call(view, elapsed, [restore], restores, rerun=False)
        reruns = restores.rerun(index, found, self.driver.history)
        if reruns:
            view, elapsed = self._call(view, elapsed, reruns, restores, rerun=True)
        return view, elapsed

    def _call(
        self, view: View, elapsed: int, made: list[Step], restores: RestorePricing, *, rerun: bool
    ) -> tuple[View, int]:
        """One call on ``view`` whose completion is the head of ``made``, metered and paid;
        the steps it made appended and observed; the view rendered again."""
        record = self.call(view, elapsed, made[0], None)
        restores.paid(record, rerun=rerun)
        for step in made:
            self.driver.append_step(step)
        return self.render()
