"""``refold``: ReFold's reversible rendering layer (arXiv 2610.07863), made cache-aware.

The history stays whole; only the rendering shrinks. A boundary splits the steps: those after it
are shown in full (labelled ``[step N]``), those before it are rendered once, at the advance
that settled them, by :class:`~contextfold.strategies.refold.prefix.PrefixRenderer` (fold,
supersede, mask, dedup), and then kept byte-identical until the next advance, so a server's
prefix cache keeps hitting. The last ``window`` steps are always in full.

The boundary may advance once ``every`` steps have passed it beyond the window. With
``advance: fixed`` it always does (ReFold's chunked rendering). With ``advance: cost`` it does
when the price table says the saving pays for the rewrite: an advance changes the prompt from
the first re-rendered message on, and under cache pricing that suffix is written to the cache
again; the saving is the tokens it removes, read at the cache-read price on each later call
(assumed as many as the calls made so far). A view over the budget always forces an advance.

Every removal is restorable: the agent gets a ``restore`` tool (step number) that returns the
original content verbatim, and the step is shown in full from the next advance on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from pydantic import Field

from contextfold.core.errors import ConfigError
from contextfold.core.history import History, Step
from contextfold.core.messages import AssistantMessage, SystemMessage
from contextfold.core.meter import PRICE_TABLES
from contextfold.core.view import (
    SYSTEM_PROVENANCE,
    Elision,
    Provenance,
    RestorePath,
    View,
    ViewBuilder,
)
from contextfold.strategies.base import StrategyConfig
from contextfold.strategies.refold.markers import INSTRUCTIONS, parse_markers
from contextfold.strategies.refold.prefix import (
    Entry,
    Operators,
    PrefixRenderer,
    SessionState,
    groups_of,
    labelled,
)
from contextfold.strategies.refold.settled import Settled
from contextfold.strategies.restore import RESTORE_TOOL, restore_text
from contextfold.strategies.supersede import resource_key

__all__ = ["RefoldConfig", "RefoldStrategy"]

_EARLY_RETRY = 8
"""Calls before pending changes to settled steps that were turned down are weighed again."""

_Entries = Callable[[int], Sequence[Entry]]
"""The messages of one step as the renderer should see them (raw, or from an upstream view)."""


class RefoldConfig(StrategyConfig):
    type: Literal["refold"] = "refold"
    every: int = Field(
        1, ge=1, description="Steps the boundary must be able to move before it may advance (k)."
    )
    window: int = Field(
        2, ge=1, description="Most recent steps with tool outputs always shown in full."
    )
    advance: Literal["fixed", "cost"] = "cost"
    prices: str = Field("default", description="Price table the cost rule uses.")
    horizon: int = Field(
        40, ge=1, description="Calls the cost rule expects at least to follow an advance."
    )
    fold: bool = True
    supersede: bool = True
    mask: bool = Field(True, description="Settled outputs become restorable stubs.")
    dedup: bool = True
    spans: bool = True
    min_run: int = Field(8, ge=2, description="Shortest run of repeated lines to dedup.")
    instructions: bool = Field(True, description="Ask the agent for PROGRESS/STALE lines.")


class RefoldStrategy:
    """Chunked, reversible rendering; also a chain member (``apply``) and a tool provider."""

    Config = RefoldConfig

    def __init__(self, config: RefoldConfig | None = None) -> None:
        self.config = cfg = config or RefoldConfig()
        if cfg.prices not in PRICE_TABLES:
            raise ConfigError(
                f"refold: unknown price table {cfg.prices!r}; known: {', '.join(PRICE_TABLES)}"
            )
        self.name = "refold"
        self.ops = Operators(cfg.fold, cfg.supersede, cfg.mask, cfg.dedup, cfg.spans, cfg.min_run)
        self._history: History | None = None
        self._upstream: tuple[Elision, ...] = ()  # elisions of an upstream view (chains)

    def _reset(self, history: History) -> None:
        self._history = history
        self._state = SessionState()
        self._renderer = PrefixRenderer(history, self._state, self.ops)
        self._observed = 0
        self._steps: list[ViewBuilder] = []  # settled rendering of each step rendered so far
        self._sources: list[Sequence[Entry]] = []  # what each was rendered from
        self._dirty: set[int] = set()  # rendered steps whose rendering is out of date
        self._changed: set[int] = set()  # steps whose rendering changed since settled
        self._early_retry = (0, 0)  # (pending changes, call) when they were last turned down
        self._prefix = Settled.start(self._system(history))
        self._tail: dict[int, list[Entry]] = {}
        self._calls = 0
        self.advances = self.forced_compactions = 0

    # -- protocol ------------------------------------------------------------------------
    def observe(self, step: Step, history: History) -> None:
        self._sync(history)

    def render(self, history: History, budget: int | None) -> View:
        self._sync(history)
        self._upstream = ()
        return self._render(budget, self._step_entries)

    def apply(self, view: View, history: History, budget: int | None) -> View:
        """Chain use: render from an upstream view's messages instead of the raw steps."""
        self._sync(history)
        groups = groups_of(view)
        # what upstream left out stays out; refold's restore brings back any step verbatim
        self._upstream = tuple(
            e if e.restore else replace(e, restore=RestorePath.step(e.steps[0]))
            for e in view.elisions
        )
        self._tail.clear()  # upstream may change any step between calls
        for i, source in enumerate(self._sources):
            if tuple(groups.get(i, ())) != tuple(source):
                self._dirty.add(i)
        return self._render(budget, lambda i: groups.get(i, []))

    def compact(self, history: History, budget: int) -> bool:
        """Nothing more to do: ``render`` already advances the boundary as far as the budget
        needs (each such advance is counted in ``forced_compactions``)."""
        return False

    def tools(self) -> list[dict[str, Any]]:
        return [RESTORE_TOOL]

    def call_tool(self, name: str, arguments: Mapping[str, Any], history: History) -> str:
        if name != "restore":
            return f"error: refold has no tool {name!r}; it offers restore(step)"
        self._sync(history)
        text, step = restore_text(arguments, history)
        if step is not None:
            self._state.restored.add(step)
            self._mark(step)
        return text

    # -- what the history says -----------------------------------------------------------
    def _sync(self, history: History) -> None:
        if history is not self._history or self._observed > len(history):
            self._reset(history)
        for step in history.steps[self._observed :]:
            self._learn(step)
        self._observed = len(history)

    def _learn(self, step: Step) -> None:
        state = self._state
        head = step.message
        if not isinstance(head, AssistantMessage):
            return
        for call in head.tool_calls:
            state.keys[step.index, call.id] = key = resource_key(call)
            older = state.latest.get(key)
            state.latest[key] = step.index
            if older is not None and self.ops.supersede:
                self._mark(older)
        markers = parse_markers(head.content)
        state.malformed_markers += markers.malformed
        if step.results:
            state.observations.append(step.index)
        if markers.progress:
            state.progress[step.index] = markers.progress
        for stale in markers.stale:
            if stale < step.index and stale not in state.stale:
                state.stale.add(stale)
                self._mark(stale)

    def _mark(self, step: int) -> None:
        if step < len(self._steps):
            self._dirty.add(step)

    def _step_entries(self, index: int) -> list[Entry]:
        step = self._history[index]  # type: ignore[index]
        prov = Provenance((index,))
        return [(m, t, prov) for m, t in zip(step.messages, step.tokens, strict=True)]

    # -- rendering -----------------------------------------------------------------------
    def _render(self, budget: int | None, entries: _Entries) -> View:
        self._calls += 1
        target = self._target()
        if target - self._prefix.boundary >= self.config.every:
            self._consider(target, entries)
        view = self._view(entries)
        n = self._observed
        while budget is not None and view.total_tokens > budget and self._prefix.boundary < n:
            self.forced_compactions += 1  # an advance the budget forced
            target = max(target, self._prefix.boundary + 1)
            self._update(target, entries)
            self._commit(self._extend(target, self._first_change()), applied=True)
            view = self._view(entries)
        return view

    def _target(self) -> int:
        """Where the boundary should be: at the ``window``-th most recent step with tool
        outputs, so that many outputs stay in full (and every step after them)."""
        seen = self._state.observations
        return seen[-self.config.window] if len(seen) >= self.config.window else 0

    def _consider(self, target: int, entries: _Entries) -> None:
        """Advance to ``target`` when the cost rule says it pays. Changes to steps already
        settled (a fold, a supersede) rewrite more of the cached prompt, so they are weighed
        apart and may wait, to share one rewrite later; a restore is applied at once."""
        self._update(target, entries)
        cheap = self._extend(target, self._prefix.boundary)
        if self._early_due():
            full = self._extend(target, self._first_change())
            restored = not self._state.restored.isdisjoint(self._changed)
            if restored or self.config.advance == "fixed" or self._pays(full, cheap):
                self._commit(full, applied=True)
                return
            self._early_retry = (len(self._changed), self._calls + _EARLY_RETRY)
        if self.config.advance == "fixed" or self._advance_pays(cheap, entries):
            self._commit(cheap, applied=False)

    def _early_due(self) -> bool:
        """Pending changes to settled steps, new since they were last turned down (or that
        long ago): weighing them means rebuilding the prefix from the first of them."""
        if self._first_change() >= self._prefix.boundary:
            return False
        seen, retry = self._early_retry
        return len(self._changed) != seen or self._calls >= retry

    def _update(self, target: int, entries: _Entries) -> None:
        """Bring step renderings up to date (they do not depend on the boundary)."""
        self._rerender_dirty(entries)
        while len(self._steps) < target:
            i = len(self._steps)
            source = entries(i)
            rendered, _ = self._renderer.render(i, source)
            self._steps.append(rendered)
            self._sources.append(source)

    def _first_change(self) -> int:
        return min([self._prefix.boundary, *self._changed])

    def _extend(self, target: int, first_change: int) -> Settled:
        return self._prefix.extend(self._steps, target, first_change)

    def _rerender_dirty(self, entries: _Entries) -> None:
        while self._dirty:
            step = min(self._dirty)
            self._dirty.discard(step)
            self._sources[step] = source = entries(step)
            before = self._steps[step]
            after, pointed = self._renderer.render(step, source)
            self._steps[step] = after
            self._dirty.update(p for p in pointed if p < len(self._steps))
            if after.messages != before.messages or after.elisions != before.elisions:
                self._changed.add(step)

    def _commit(self, prefix: Settled, *, applied: bool) -> None:
        """Settle ``prefix``; changes to earlier steps stay pending unless ``applied``."""
        old = self._prefix.boundary
        self._changed = set() if applied else {c for c in self._changed if c < old}
        self._prefix = prefix
        self._tail = {i: e for i, e in self._tail.items() if i >= prefix.boundary}
        self.advances += 1

    def _advance_pays(self, cheap: Settled, entries: _Entries) -> bool:
        """Settle new steps when the reads saved over the calls still expected outweigh
        writing everything from the old boundary on to the cache again (the outputs still in
        the window included: advancing rarely rewrites them rarely)."""
        stay = self._prefix.total + self._tail_tokens(self._prefix.boundary, entries)
        moved = cheap.total + self._tail_tokens(cheap.boundary, entries)
        return self._worth(rewritten=moved - cheap.shared, saving=stay - moved)

    def _worth(self, *, rewritten: int, saving: int) -> bool:
        if saving <= 0:
            return False
        p = PRICE_TABLES[self.config.prices]
        horizon = max(self._calls + 1, self.config.horizon)
        return rewritten * (p.cache_write - p.cache_read) < horizon * saving * p.cache_read

    def _pays(self, full: Settled, cheap: Settled) -> bool:
        """Apply pending changes to earlier steps when the reads they save over the calls
        still expected (as many as were made so far, at least ``horizon``) outweigh writing
        the stretch between the first changed step and the old boundary to the cache again."""
        return self._worth(rewritten=cheap.shared - full.shared, saving=cheap.total - full.total)

    def _system(self, history: History) -> Entry | None:
        if not self.config.instructions:
            sys = history.system
            return (sys, history.system_tokens, SYSTEM_PROVENANCE) if sys else None
        base = history.system.content + "\n\n" if history.system else ""
        system = SystemMessage(base + INSTRUCTIONS)
        return system, history.count(system), SYSTEM_PROVENANCE

    def _view(self, entries: _Entries) -> View:
        tail = self._tail_entries(self._prefix.boundary, entries)
        p = self._prefix
        return View(
            (*p.messages, *(e[0] for e in tail)),
            (*p.tokens, *(e[1] for e in tail)),
            (*p.provenance, *(e[2] for e in tail)),
            (*self._upstream, *p.elisions),
            strategy=self.name,
        )

    def _tail_entries(self, start: int, entries: _Entries) -> list[Entry]:
        history = self._history
        assert history is not None
        out: list[Entry] = []
        for index in range(start, self._observed):
            rendered = self._tail.get(index)
            if rendered is None:
                rendered = self._tail[index] = [labelled(index, e, history) for e in entries(index)]
            out.extend(rendered)
        return out

    def _tail_tokens(self, start: int, entries: _Entries) -> int:
        return sum(e[1] for e in self._tail_entries(start, entries))
