"""How a view is prepared before a model call: fold what is due, render checked, fit the budget.

:func:`prepare_view` is the one way every caller gets its view: the loop step
(:class:`~contextfold.core.driver.Driver`, which Session, the agent loop, the proxy and replay
are built on) and :func:`render_checked` (here), so a view over the budget is
never sent and nothing happens silently anywhere. A tool result the strategy rewrote keeps its
provider parts (:mod:`~contextfold.core.carry`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from contextfold.core.carry import carry_parts
from contextfold.core.errors import ContextBudgetError
from contextfold.core.folds import FoldRecord
from contextfold.core.protocols import Compacting, Folding
from contextfold.core.view import View, render_and_check

if TYPE_CHECKING:
    from contextfold.core.history import History
    from contextfold.core.protocols import Strategy

__all__ = ["Rendered", "fold_due", "prepare_view", "render_checked"]

OnFold = Callable[[FoldRecord], None]


@dataclass(frozen=True, slots=True)
class Rendered:
    """A prepared view and what preparing it did."""

    view: View
    folds: tuple[FoldRecord, ...] = ()
    """Every fold made while preparing it, accepted or refused, in order."""
    compactions: int = 0
    """1 when the view was over the budget and the strategy was asked to compact, else 0."""
    render_ns: int = 0
    """Wall time of rendering and checking the view, in nanoseconds (both renders when the
    budget forced a compaction); the folds' time is not in it (theirs is on their records)."""

    @property
    def accepted(self) -> tuple[FoldRecord, ...]:
        return tuple(r for r in self.folds if r.accepted)

    @property
    def refused(self) -> tuple[FoldRecord, ...]:
        """The folds the strategy refused (each with its ``reason``); its view is unchanged
        by them."""
        return tuple(r for r in self.folds if not r.accepted)


def fold_due(
    strategy: Strategy, history: History, budget: int | None, on_fold: OnFold | None = None
) -> list[FoldRecord]:
    """Run the folds a folding strategy has due now (none for other strategies); ``on_fold``
    hears of each record as it is made (a meter, a progress display)."""
    if not isinstance(strategy, Folding):
        return []
    records = strategy.fold(history, budget)
    if on_fold is not None:
        for record in records:
            on_fold(record)
    return records


def prepare_view(
    strategy: Strategy,
    history: History,
    budget: int | None,
    *,
    fold: bool = True,
    fit: bool = True,
    on_fold: OnFold | None = None,
) -> Rendered:
    """The view to send now (the steps below); raises
    :class:`~contextfold.core.errors.ViewError` for an invalid view and
    :class:`~contextfold.core.errors.ContextBudgetError` for one that cannot fit. With
    ``fold=False`` the caller has run the due folds itself (only the budget's forced fold
    runs here); with ``fit=False`` the budget is only the strategy's hint, never enforced
    (replay: every strategy is measured on every recorded call).

    1. a strategy that folds with a model (:class:`~contextfold.core.protocols.Folding`) runs
       the folds that are due (accepted or refused, each a record in the history's fold log);
    2. the strategy renders and the view is checked
       (:func:`~contextfold.core.view.render_and_check`);
    3. a view over the budget is never returned: a strategy that can compact
       (:class:`~contextfold.core.protocols.Compacting`) is made to, folds again (its forced
       fold) and renders again; still over, or unable to compact,
       :class:`~contextfold.core.errors.ContextBudgetError` says by how much and what to do.

    The result (:class:`Rendered`) says what happened: the folds made, accepted and refused,
    whether the budget forced a compaction, and how long rendering took.
    """
    records = fold_due(strategy, history, budget, on_fold) if fold else []
    view, elapsed = _render(strategy, history, budget)
    if not fit or budget is None or view.total_tokens <= budget:
        return Rendered(view, tuple(records), 0, elapsed)
    compacted = isinstance(strategy, Compacting) and strategy.compact(history, budget)
    if compacted:
        records += fold_due(strategy, history, budget, on_fold)
        view, again = _render(strategy, history, budget)
        elapsed += again
    if view.total_tokens > budget:
        raise ContextBudgetError(
            strategy.name, view.total_tokens, budget, history.session_id, compacted=compacted
        )
    return Rendered(view, tuple(records), 1, elapsed)


def _render(strategy: Strategy, history: History, budget: int | None) -> tuple[View, int]:
    """The checked view, its rewritten results given their parts, and the time it took."""
    start = time.perf_counter_ns()
    view = carry_parts(render_and_check(strategy, history, budget), history)
    return view, time.perf_counter_ns() - start


def render_checked(strategy: Strategy, history: History, budget: int | None = None) -> View:
    """Render ``history`` with ``strategy`` and check the view; raises :class:`ViewError`.

    With a ``budget``, a view over it is never returned: a strategy that can compact is made
    to (its forced fold runs, for one that folds) and renders again; still over, or unable to
    compact, :class:`~contextfold.core.errors.ContextBudgetError`. The folds that are due
    before the budget forces one are not run here: :func:`prepare_view`
    (and :class:`~contextfold.session.Session`, the agent loop, the proxy) run them first.
    """
    return prepare_view(strategy, history, budget, fold=False).view
