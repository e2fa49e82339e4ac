"""The hindsight bound: the smallest views that lose no value a later call takes from the context.

Built knowing the recorded future (``replay --hindsight``). A strategy that never brings back
what it dropped must keep at least this much to lose nothing, so every strategy's prompt tokens
are reported as a multiple of this row's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from contextfold.bench.availability import ArgIndex
from contextfold.core.history import History, Step
from contextfold.core.view import Elision, View, ViewBuilder

__all__ = ["NODE_LIMIT", "Hindsight"]

NODE_LIMIT = 20_000
"""Branch-and-bound nodes searched per call before the best cover found is kept."""


@dataclass(frozen=True, slots=True)
class _Demand:
    call: int
    """The step whose call needs the value."""
    last: int
    """The latest step before ``call`` that holds it."""
    steps: frozenset[int]


class Hindsight:
    """A replay-only strategy that renders the hindsight bound of one recorded trajectory.

    At the call before step ``c`` the view holds the system message, the latest user message, and
    the fewest tokens of whole earlier steps (an assistant message always with all its tool
    results) such that every value a call at step ``c`` or later needs
    (:class:`~contextfold.bench.availability.ArgIndex`) is held by a kept step, unless a step from
    ``c`` on holds it again before that call needs it. Which steps to keep is a weighted set cover,
    solved exactly by branch and bound (values held by one step only force it; the rest is searched
    with the smallest candidate set first and pruned by the cheapest step each open value still
    needs). A search that would pass :data:`NODE_LIMIT` nodes keeps the best cover found so far,
    and the call is counted in ``inexact``.
    """

    name = "hindsight"

    def __init__(self, index: ArgIndex) -> None:
        self._demands = [
            _Demand(call, max(need.steps), need.steps)
            for call, needs in index.needs.items()
            for need in needs
        ]
        self.inexact = 0

    def observe(self, step: Step, history: History) -> None:
        """Nothing to learn: the future is known."""

    def render(self, history: History, budget: int | None) -> View:
        now = len(history)
        wanted = {d.steps for d in self._demands if d.call >= now and d.last < now}
        weights = {s.index: s.total_tokens for s in history.steps}
        user = history.latest_user_index
        keep = self._cover(list(wanted), weights, set() if user is None else {user})
        out = ViewBuilder()
        out.add_system(history)
        for step in history.steps:
            if step.index in keep:
                out.add_step(step)
            else:
                out.elide(Elision((step.index,), "hindsight", step.total_tokens, None))
        return out.build(self.name)

    def _cover(
        self, sets: list[frozenset[int]], weights: Mapping[int, int], kept: set[int]
    ) -> set[int]:
        forced = kept | {next(iter(s)) for s in sets if len(s) == 1}
        rest = _minimal([s for s in sets if not s & forced])
        search = _Search(weights)
        search.run(rest, frozenset(), 0)
        self.inexact += search.nodes > NODE_LIMIT
        return forced | set(search.best)


def _minimal(sets: Sequence[frozenset[int]]) -> list[frozenset[int]]:
    """The sets no other set is strictly inside (covering those covers the rest)."""
    unique = sorted(set(sets), key=len)
    out: list[frozenset[int]] = []
    for s in unique:
        if not any(t <= s for t in out):
            out.append(s)
    return out


class _Search:
    """Exact minimum-weight hitting set by branch and bound, with a node limit."""

    def __init__(self, weights: Mapping[int, int]) -> None:
        self.weights = weights
        self.best: frozenset[int] = frozenset()
        self.best_cost: float = float("inf")
        self.nodes = 0

    def run(self, sets: list[frozenset[int]], chosen: frozenset[int], cost: int) -> None:
        self.nodes += 1
        if not sets:
            if cost < self.best_cost:
                self.best, self.best_cost = chosen, cost
            return
        if self.nodes > NODE_LIMIT and self.best_cost < float("inf"):
            return
        w = self.weights
        bound = max(min(w[s] for s in open_) for open_ in sets)
        if cost + bound >= self.best_cost:
            return
        branch = min(sets, key=len)
        for step in sorted(branch, key=w.__getitem__):
            left = [s for s in sets if step not in s]
            self.run(left, chosen | {step}, cost + w[step])
