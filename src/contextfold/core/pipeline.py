"""How a view is prepared before a model call: fold what is due, render checked, fit the budget.

:func:`prepare_view` is the one way every caller gets its view (Session, the agent loop, the
proxy, :func:`~contextfold.core.view.render_checked`), so a view over the budget is never sent
and nothing happens silently anywhere. A tool result the strategy rewrote keeps its
provider parts (:mod:`~contextfold.core.carry`).
"""

from __future__ import annotations

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

__all__ = ["Rendered", "fold_due", "prepare_view"]

OnFold = Callable[[FoldRecord], None]


@dataclass(frozen=True, slots=True)
class Rendered:
    """A prepared view and what preparing it did."""

    view: View
    folds: tuple[FoldRecord, ...] = ()
    """Every fold made while preparing it, accepted or refused, in order."""
    compactions: int = 0
    """1 when the view was over the budget and the strategy was asked to compact, else 0."""

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
    on_fold: OnFold | None = None,
) -> Rendered:
    """The view to send now (the steps below); raises
    :class:`~contextfold.core.errors.ViewError` for an invalid view and
    :class:`~contextfold.core.errors.ContextBudgetError` for one that cannot fit. With
    ``fold=False`` the caller has run the due folds itself (only the budget's forced fold
    runs here).

    1. a strategy that folds with a model (:class:`~contextfold.core.protocols.Folding`) runs
       the folds that are due (accepted or refused, each a record in the history's fold log);
    2. the strategy renders and the view is checked
       (:func:`~contextfold.core.view.render_and_check`);
    3. a view over the budget is never returned: a strategy that can compact
       (:class:`~contextfold.core.protocols.Compacting`) is made to, folds again (its forced
       fold) and renders again; still over, or unable to compact,
       :class:`~contextfold.core.errors.ContextBudgetError` says by how much and what to do.

    The result (:class:`Rendered`) says what happened: the folds made, accepted and refused, and
    whether the budget forced a compaction.
    """
    records = fold_due(strategy, history, budget, on_fold) if fold else []
    view = carry_parts(render_and_check(strategy, history, budget), history)
    if budget is None or view.total_tokens <= budget:
        return Rendered(view, tuple(records))
    compacted = isinstance(strategy, Compacting) and strategy.compact(history, budget)
    if compacted:
        records += fold_due(strategy, history, budget, on_fold)
        view = carry_parts(render_and_check(strategy, history, budget), history)
    if view.total_tokens > budget:
        raise ContextBudgetError(
            strategy.name, view.total_tokens, budget, history.session_id, compacted=compacted
        )
    return Rendered(view, tuple(records), 1)
