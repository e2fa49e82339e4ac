"""``refold`` (ReFold, arXiv 2610.07863, made cache-aware). Its rule: the view shows the system
prompt, the settled prefix, and in full every step from the boundary on (the ``window``-th latest
step with outputs; long outputs cut, repeats stubbed as they arrive). Before the boundary an agent
step's text becomes a one-line note (its PROGRESS text, else its first line) beside its calls, and
its outputs stubs where they pay (:mod:`.policy`). The boundary advances only when the reads saved
pay for rewriting the cache and the restores risked, under the price table (:mod:`.advance`), or
when the budget forces it. Everything removed comes back verbatim from the history, never edited:
``restore(step=N)``, with ``lines="a-b"`` or ``part='text'`` (docs/strategies/refold.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from contextfold.core.errors import ConfigError
from contextfold.core.experience import Experience
from contextfold.core.history import History, Step
from contextfold.core.messages import AssistantMessage
from contextfold.core.meter import PRICE_TABLES
from contextfold.core.view import Elision, Provenance, RestorePath, View
from contextfold.strategies.refold import advance
from contextfold.strategies.refold.advance import Rent
from contextfold.strategies.refold.config import RefoldConfig
from contextfold.strategies.refold.cost import CostRule
from contextfold.strategies.refold.markers import split_markers
from contextfold.strategies.refold.prefix import (
    Entry,
    Operators,
    PrefixRenderer,
    SessionState,
    groups_of,
    restores_only,
)
from contextfold.strategies.refold.reach import Reach
from contextfold.strategies.refold.renderings import Renderings
from contextfold.strategies.refold.repeats import Repeats
from contextfold.strategies.refold.runs import SLACK, Runs
from contextfold.strategies.refold.settled import Settled
from contextfold.strategies.refold.tail import Entries, Tail, head, note
from contextfold.strategies.refold.trims import Trims
from contextfold.strategies.restore import (
    RESTORE_LINES_TOOL,
    RESTORE_TOOL,
    calls_made,
    not_offered,
    restore_text,
    with_part,
)

__all__ = ["RefoldConfig", "RefoldStrategy"]

_EARLY_RETRY = 8
"""Calls before pending changes to settled steps that were turned down are weighed again."""


class RefoldStrategy:
    """Outputs before a boundary become stubs, one line naming restore; every removal restorable.

    Chunked, reversible rendering; also a chain member (``apply``) and a tool provider.

    Steps before the boundary are rendered once by
    :class:`~contextfold.strategies.refold.prefix.PrefixRenderer` (fold, supersede, mask, dedup);
    the boundary advances when :class:`~contextfold.strategies.refold.cost.CostRule` says it pays
    (or always, ``advance: fixed``; or when the budget forces it). Repeats (:mod:`.repeats`) and
    long outputs (:mod:`.trims`) are stubbed or cut as they arrive, rewriting nothing; a restore
    may name a line range.
    """

    Config = RefoldConfig

    def __init__(self, config: RefoldConfig | None = None) -> None:
        self.config = cfg = config or RefoldConfig()
        if cfg.prices not in PRICE_TABLES:
            raise ConfigError(
                f"refold: unknown price table {cfg.prices!r}; known: {', '.join(PRICE_TABLES)}"
            )
        self.name = "refold"
        self.ops = Operators(
            cfg.fold,
            cfg.supersede,
            cfg.mask,
            cfg.dedup,
            cfg.spans,
            cfg.min_run,
            notes=not cfg.keep_text,
        )
        self.rule = CostRule(PRICE_TABLES[cfg.prices], cfg.horizon)
        self._history: History | None = None
        self._upstream: tuple[Elision, ...] = ()  # elisions of an upstream view (chains)
        self._experience: Experience | None = None
        self._ended: History | None = None

    def _reset(self, history: History) -> None:
        self._history = history
        self._state = SessionState()
        system = history.system
        prior = self._experience.reach_prior() if self._experience else None
        self._reach = Reach(system.content if system else "", self.config.window, prior=prior)
        self._repeats = repeats = Repeats()
        self._renderer = PrefixRenderer(
            history,
            self._state,
            self.ops,
            keep=self._reach.drawn,
            repeats=repeats,
        )
        self._trims = Trims(self.config.cut)
        self._checked = 0  # steps looked at for repeats and cuts
        self._observed = 0
        self._settled = Renderings(self._renderer)
        self._early_retry = (0, 0)  # (pending changes, call) when they were last turned down
        self._system_led: bool | None = None  # the system prompt outweighed the rest (advance.py)
        self._prefix = Settled.start(head(history))
        self._folding = False  # no advance yet: the view is the history as it is
        self._tail = Tail(history, repeats)
        self._runs = Runs(history)
        self._calls = 0
        self._sent = 0  # steps the previous call sent (the ones after are new to the cache)
        self.advances = self.forced_compactions = self.restores = 0

    # -- protocol ------------------------------------------------------------------------
    def observe(self, step: Step, history: History) -> None:
        self._sync(history)

    def render(self, history: History, budget: int | None) -> View:
        self._sync(history)
        self._upstream = ()
        self._find_new(history)
        return self._render(history, budget, self._step_entries)

    def share(self, experience: Experience) -> None:
        """Learn from the workload's ended sessions (unless ``learn=false``)."""
        if self.config.learn:
            self._experience = experience
            self.rule = replace(self.rule, experience=experience)

    def end(self, history: History) -> None:
        if self._experience is None or self._ended is history:
            return
        self._sync(history)
        self._ended = history
        calls = max(self._calls, calls_made(history) - 1)  # each call left its reply
        self._experience.record(calls=calls, hits=self._reach.hits, exposed=self._reach.exposed)

    def apply(self, view: View, history: History, budget: int | None) -> View:
        """Chain use: render from an upstream view's messages instead of the raw steps."""
        self._sync(history)
        groups = groups_of(view)
        # what upstream left out stays out; refold's restore brings back any step verbatim
        self._upstream = tuple(
            e if e.restore else replace(e, restore=RestorePath.step(e.steps[0]))
            for e in view.elisions
        )
        self._tail.forget()  # upstream may change any step between calls
        self._settled.compare(groups)
        return self._render(history, budget, lambda i: groups.get(i, []))

    def split_markers(self, text: str) -> tuple[str, str]:
        """The reply as a client is shown it, and the PROGRESS/STALE lines that end it."""
        return split_markers(text)

    def compact(self, history: History, budget: int) -> bool:
        """Nothing to do: ``render`` advances as far as a budget needs (forced_compactions)."""
        return False

    def tools(self) -> list[dict[str, Any]]:
        return [with_part(RESTORE_LINES_TOOL if self.config.cut else RESTORE_TOOL)]

    def call_tool(self, name: str, arguments: Mapping[str, Any], history: History) -> str:
        if name != "restore":
            return not_offered(self.name, name)
        self._sync(history)
        text, step = restore_text(arguments, history)
        self.restores += step is not None
        return text

    # -- what the history says -----------------------------------------------------------
    def _sync(self, history: History) -> None:
        if history is not self._history or self._observed > len(history):
            self._reset(history)
        for step in history.steps[self._observed :]:
            for drawn in self._reach.learn(step):  # kept in full, unless settled already
                if drawn >= self._prefix.boundary:
                    self._settled.mark(drawn)
            for changed in self._state.learn(step, supersede=self.ops.supersede):
                self._settled.mark(changed)
                for source in self._repeats.pointed(changed):  # now superseded past its repeat
                    self._settled.mark(source)
        self._observed = len(history)

    def _find_new(self, history: History) -> None:
        """Before new outputs enter the view: stub those that repeat one shown in full
        (:mod:`.repeats`), cut the long ones (:mod:`.trims`)."""
        repeats, shown = self._repeats, self._renderer.seen.indexed
        for step in history.steps[self._checked : self._observed]:
            restoring = isinstance(step.message, AssistantMessage) and restores_only(step.message)
            if self.ops.dedup and not restoring:
                repeats.find(step, history, shown, self._prefix.boundary)
            stubbed = any(repeats.stub(step.index, r.tool_call_id) for r in step.results)
            self._trims.find(step, history, skip=stubbed)
        self._checked = self._observed

    def _step_entries(self, index: int) -> list[Entry]:
        step = self._history[index]  # type: ignore[index]
        prov = Provenance((index,))
        entries = zip(step.messages, step.tokens, strict=True)
        return [self._trims.entry(index, (m, t, prov)) for m, t in entries]

    # -- rendering -----------------------------------------------------------------------
    def _render(self, history: History, budget: int | None, entries: Entries) -> View:
        # the calls the history shows count too (a strategy rebuilt from a store rendered none)
        self._calls = max(self._calls + 1, calls_made(history))
        target = self._target()
        if target - self._prefix.boundary >= self.config.every:
            self._consider(target, entries)
        view = self._view(entries)
        while (
            budget is not None
            and view.total_tokens > budget
            and self._fit(target, view.total_tokens - budget, budget, entries)
        ):
            self.forced_compactions += 1
            view = self._view(entries)
        self._sent = self._observed
        return view

    def _fit(self, target: int, excess: int, budget: int, entries: Entries) -> bool:
        """One change the budget forces: an advance to ``target`` (the window); then a run of
        settled steps folded (:mod:`.runs`) when that can free the ``excess``, else an advance
        past the window; runs again once every step is settled. False when nothing is left
        (a budget that cannot hold the system prompt, the task and the latest user message)."""
        boundary, n = self._prefix.boundary, self._observed
        first = None
        if boundary >= target:
            tokens = list(self._prefix.step_tokens)
            if self._prefix.note is not None and self._prefix.note_at < boundary:
                tokens[self._prefix.note_at] -= self._prefix.note[1]  # the note stays
            first = self._runs.fold(tokens, excess, slack=budget // SLACK, anyway=boundary >= n)
        if first is None and boundary >= n:
            return False
        if first is None:
            target = max(target, boundary + 1)
            self._settled.threshold(0, boundary)
            self._settled.update(target, entries, unlabel=not self._folding)
        else:
            target = boundary
        changed = min(boundary if first is None else first, self._first_change())
        self._commit(self._extend(target, changed), applied=True)
        return True

    def _target(self) -> int:
        """Where the boundary should be: at the ``window``-th most recent step with tool
        outputs, so that many outputs stay in full (and every step after them)."""
        seen = self._state.observations
        return seen[-self.config.window] if len(seen) >= self.config.window else 0

    def _consider(self, target: int, entries: Entries) -> None:
        """Advance to ``target`` when the cost rule says it pays. Changes to steps already
        settled (a fold, a supersede) rewrite more of the cached prompt, so they are weighed
        apart and may wait, to share one rewrite later."""
        boundary, fixed = self._prefix.boundary, self.config.advance == "fixed"
        stay = self._tail_tokens(boundary, entries, self._folding)  # shown after it now
        maskable = self._reach.maskable(self._repeats.kept)
        if not fixed:  # mask only what pays for its own restore risk
            prompt = self._prefix.total + stay
            if self._system_led is None:  # the first output older than the window: decided once
                system = sum(e[1] for e in self._prefix.head)
                self._system_led = system > prompt - system
            smallest = self._rent.smallest_masked(prompt, maskable, system_led=self._system_led)
            self._settled.threshold(smallest, boundary)
        self._settled.update(target, entries, unlabel=not self._folding)
        cheap = self._extend(target, boundary)
        if self._early_due():
            full = self._extend(target, self._first_change())
            if fixed or self._pays(full, cheap, entries, maskable):
                self._commit(full, applied=True)
                return
            self._early_retry = (len(self._settled.changed), self._calls + _EARLY_RETRY)
        if fixed or self._advance_pays(cheap, entries, stay, maskable):
            self._commit(cheap, applied=False)

    def _early_due(self) -> bool:
        """Pending changes to settled steps, new since they were last turned down (or that
        long ago): weighing them means rebuilding the prefix from the first of them."""
        seen, retry = self._early_retry
        new = len(self._settled.changed) != seen or self._calls >= retry
        return new and self._first_change() < self._prefix.boundary

    def _first_change(self) -> int:
        return min([self._prefix.boundary, *self._settled.changed])

    def _extend(self, target: int, first_change: int) -> Settled:
        prefix = self._prefix
        if not self._folding and self.config.instructions and self._history is not None:
            prefix = prefix.with_note(note(self._history), self._settled.first_rewritten(target))
        return prefix.extend(self._runs.blocks(self._settled.steps), target, first_change)

    def _commit(self, prefix: Settled, *, applied: bool) -> None:
        """Settle ``prefix``; changes to earlier steps stay pending unless ``applied``."""
        self._settled.settle(None if applied else self._prefix.boundary)
        self._prefix = prefix
        self._tail.forget(prefix.boundary)
        self._folding = True
        self.advances += 1

    def _advance_pays(self, cheap: Settled, entries: Entries, stay: int, maskable: int) -> bool:
        """Settle new steps when the reads saved over the calls still expected outweigh
        writing what follows the old boundary (``stay`` tokens shown after it) to the cache
        again and the restores it may cost (:func:`.advance.advance`)."""
        change = advance.advance(
            self._prefix,
            cheap,
            stay=stay,
            moved=self._tail_tokens(cheap.boundary, entries, True),
            new=self._tail_tokens(max(self._sent, cheap.boundary), entries, True),
            first=not self._folding,
        )
        return self._rent.pays(change, calls=self._calls, maskable=maskable)

    def _pays(self, full: Settled, cheap: Settled, entries: Entries, maskable: int) -> bool:
        """Apply pending changes to earlier steps when the reads they save over the calls
        still expected outweigh writing the stretch between the first changed step and the
        old boundary to the cache again (:func:`.advance.pending`)."""
        tail = self._tail_tokens(full.boundary, entries, True)
        change = advance.pending(full, cheap, tail)
        return self._rent.pays(change, calls=self._calls, maskable=maskable)

    @property
    def _rent(self) -> Rent:
        return Rent(self.rule, self._reach)

    def _view(self, entries: Entries) -> View:
        p = self._prefix
        tail = self._tail.entries(p.boundary, self._observed, entries, labels=self._folding)
        return View(
            (*p.messages, *(e[0] for e in tail)),
            (*p.tokens, *(e[1] for e in tail)),
            (*p.provenance, *(e[2] for e in tail)),
            (
                *self._upstream,
                *p.elisions,
                *self._repeats.after(p.boundary),
                *self._trims.elisions(self._observed),
            ),
            strategy=self.name,
            settled=len(p.messages),
        )

    def _tail_tokens(self, start: int, entries: Entries, labels: bool) -> int:
        return self._tail.tokens(start, self._observed, entries, labels=labels)
