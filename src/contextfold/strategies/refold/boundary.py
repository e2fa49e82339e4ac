"""Where refold's boundary goes at each call: the decision, one object with one entry point.

The rule: the boundary follows the ``window``-th latest step with tool outputs, ``every`` steps
or more at a time, when the reads saved over the calls still expected outweigh writing the cache
again and the restores risked (:mod:`.advance`, :mod:`.cost`; always with ``advance: fixed``).
Changes to settled steps are weighed apart and may wait to share one rewrite. A budget forces
the rest: an advance, runs of settled steps folded (:mod:`.runs`), an advance past the window.
"""

from __future__ import annotations

from contextfold.core.history import History
from contextfold.strategies.refold import advance
from contextfold.strategies.refold.advance import Rent
from contextfold.strategies.refold.config import RefoldConfig
from contextfold.strategies.refold.cost import CostRule
from contextfold.strategies.refold.entries import Entries
from contextfold.strategies.refold.prefix import SessionState
from contextfold.strategies.refold.reach import Reach
from contextfold.strategies.refold.renderings import Renderings
from contextfold.strategies.refold.repeats import Repeats
from contextfold.strategies.refold.runs import SLACK, Runs
from contextfold.strategies.refold.settled import Settled
from contextfold.strategies.refold.tail import Tail, head, note
from contextfold.strategies.restore import calls_made

__all__ = ["EARLY_RETRY", "Boundary"]

EARLY_RETRY = 8
"""Calls before pending changes to settled steps that were turned down are weighed again."""


class Boundary:
    """One session's boundary decision and its state: the settled prefix, the advances and
    forced compactions made, the pending changes last turned down, whether the system prompt
    leads. :meth:`place` is its one entry point, once a call.

    The target is the ``window``-th latest step with tool outputs (it and every step after it
    stay in full). Changes to steps already settled (a fold, a supersede) rewrite more of the
    cached prompt: weighed apart, and turned down, they wait for another change or
    :data:`EARLY_RETRY` calls. An output too small for masking it to pay for its own restore
    stays whole, and none is masked in a session its system prompt leads. Over the budget: an
    advance to the target, then runs of settled steps folded, then an advance past the window.

    It weighs with ``rule`` (the strategy's cost rule as the session began) and reads what the
    strategy learns from the history (``state``: the steps with outputs; ``reach``: the
    reach-back rate; ``repeats``: the outputs kept in full), brings the ``renderings`` of
    settled steps up to date as far as it settles, and sizes the ``tail`` shown after it.
    Where a new lever decides: how far (:meth:`_target`), whether it pays (:meth:`_consider`),
    what a budget forces (:meth:`_fit`).
    """

    def __init__(
        self,
        history: History,
        config: RefoldConfig,
        rule: CostRule,
        *,
        state: SessionState,
        reach: Reach,
        repeats: Repeats,
        renderings: Renderings,
        tail: Tail,
    ) -> None:
        self._history, self._config = history, config
        self._state, self._repeats, self._settled, self._tail = state, repeats, renderings, tail
        self._rent = Rent(rule, reach, unseen=history.unseen_tokens)
        self._runs = Runs(history)
        self.prefix = Settled.start(head(history))
        """The system message and the settled steps, as the view shows them."""
        self.calls = 0
        """The calls made so far, this one included once :meth:`place` ran."""
        self.advances = self.forced_compactions = 0
        self.system_led: bool | None = None
        """The system prompt outweighed the rest as the first output left the window (decided
        once, then; :meth:`~.advance.Rent.smallest_masked`)."""
        self._early_retry = (0, 0)  # (pending changes, call) when they were last turned down
        self._sent = 0  # steps the previous call sent (the ones after are new to the cache)

    @property
    def folding(self) -> bool:
        """Whether the boundary has advanced: until then the view is the history as it is."""
        return self.advances > 0

    def place(self, entries: Entries, budget: int | None) -> Settled:
        """The settled prefix of this call's view (the steps after it are shown in full):
        advanced where the rule says it pays, then as far as the ``budget`` needs. ``entries``
        gives each step's messages as the view would show them."""
        self.calls = max(self.calls + 1, calls_made(self._history))
        target = self._target()
        if target - self.prefix.boundary >= self._config.every:
            self._consider(target, entries)
        while budget is not None:
            excess = self.prefix.total + self._shown(self.prefix.boundary, entries) - budget
            if excess <= 0 or not self._fit(target, excess, budget, entries):
                break
            self.forced_compactions += 1
        self._sent = len(self._history)
        return self.prefix

    def _target(self) -> int:
        """Where the boundary should be: at the ``window``-th most recent step with tool
        outputs, so that many outputs stay in full (and every step after them)."""
        seen, window = self._state.observations, self._config.window
        return seen[-window] if len(seen) >= window else 0

    def _consider(self, target: int, entries: Entries) -> None:
        """Advance to ``target`` when the cost rule says it pays. Changes to steps already
        settled (a fold, a supersede) rewrite more of the cached prompt, so they are weighed
        apart and may wait, to share one rewrite later."""
        boundary, fixed = self.prefix.boundary, self._config.advance == "fixed"
        stay = self._shown(boundary, entries)  # shown after it now
        maskable = self._rent.reach.maskable(self._repeats.kept)
        if not fixed:  # mask only what pays for its own restore risk
            unseen = self._history.unseen_tokens  # sent before the history, never shown
            prompt = self.prefix.total + stay + unseen
            if self.system_led is None:  # the first output older than the window: decided once
                system = sum(e[1] for e in self.prefix.head) + unseen
                self.system_led = system > prompt - system
            smallest = self._rent.smallest_masked(prompt, maskable, system_led=self.system_led)
            self._settled.threshold(smallest, boundary)
        self._settled.update(target, entries, unlabel=not self.folding)
        cheap = self._extend(target, boundary)
        if self._early_due():
            full = self._extend(target, self._first_change())
            if fixed or self._pays(full, cheap, entries, maskable):
                self._commit(full, applied=True)
                return
            self._early_retry = (len(self._settled.changed), self.calls + EARLY_RETRY)
        if fixed or self._advance_pays(cheap, entries, stay, maskable):
            self._commit(cheap, applied=False)

    def _fit(self, target: int, excess: int, budget: int, entries: Entries) -> bool:
        """One change the budget forces: an advance to ``target`` (the window); then a run of
        settled steps folded (:mod:`.runs`) when that can free the ``excess``, else an advance
        past the window; runs again once every step is settled. False when nothing is left
        (a budget that cannot hold the system prompt, the task and the latest user message)."""
        prefix, n = self.prefix, len(self._history)
        boundary, first = prefix.boundary, None
        if boundary >= target:
            tokens = list(prefix.step_tokens)
            if prefix.note is not None and prefix.note_at < boundary:
                tokens[prefix.note_at] -= prefix.note[1]  # the note stays
            first = self._runs.fold(tokens, excess, slack=budget // SLACK, anyway=boundary >= n)
        if first is None and boundary >= n:
            return False
        if first is None:
            target = max(target, boundary + 1)
            self._settled.threshold(0, boundary)
            self._settled.update(target, entries, unlabel=not self.folding)
        else:
            target = boundary
        changed = min(boundary if first is None else first, self._first_change())
        self._commit(self._extend(target, changed), applied=True)
        return True

    def _early_due(self) -> bool:
        """Pending changes to settled steps, new since they were last turned down (or that
        long ago): weighing them means rebuilding the prefix from the first of them."""
        seen, retry = self._early_retry
        new = len(self._settled.changed) != seen or self.calls >= retry
        return new and self._first_change() < self.prefix.boundary

    def _first_change(self) -> int:
        return min([self.prefix.boundary, *self._settled.changed])

    def _extend(self, target: int, first_change: int) -> Settled:
        prefix = self.prefix
        if not self.folding and self._config.instructions:
            prefix = prefix.with_note(note(self._history), self._settled.first_rewritten(target))
        return prefix.extend(self._runs.blocks(self._settled.steps), target, first_change)

    def _commit(self, prefix: Settled, *, applied: bool) -> None:
        """Settle ``prefix``; changes to earlier steps stay pending unless ``applied``."""
        self._settled.settle(None if applied else self.prefix.boundary)
        self.prefix = prefix
        self._tail.forget(prefix.boundary)
        self.advances += 1

    def _advance_pays(self, cheap: Settled, entries: Entries, stay: int, maskable: int) -> bool:
        """Settle new steps when the reads saved over the calls still expected outweigh
        writing what follows the old boundary (``stay`` tokens shown after it) to the cache
        again and the restores it may cost (:func:`.advance.advance`)."""
        change = advance.advance(
            self.prefix,
            cheap,
            stay=stay,
            moved=self._shown(cheap.boundary, entries, labels=True),
            new=self._shown(max(self._sent, cheap.boundary), entries, labels=True),
            first=not self.folding,
        )
        return self._rent.pays(change, calls=self.calls, maskable=maskable)

    def _pays(self, full: Settled, cheap: Settled, entries: Entries, maskable: int) -> bool:
        """Apply pending changes to earlier steps when the reads they save over the calls
        still expected outweigh writing the stretch between the first changed step and the
        old boundary to the cache again (:func:`.advance.pending`)."""
        tail = self._shown(full.boundary, entries, labels=True)
        change = advance.pending(full, cheap, tail)
        return self._rent.pays(change, calls=self.calls, maskable=maskable)

    def _shown(self, start: int, entries: Entries, *, labels: bool | None = None) -> int:
        """Tokens the tail shows from step ``start`` on (labelled once the boundary has
        advanced, unless ``labels`` says)."""
        labels = self.folding if labels is None else labels
        return self._tail.tokens(start, len(self._history), entries, labels=labels)
