"""``refold`` (ReFold, arXiv 2610.07863, made cache-aware). Its rule: the view shows the system
prompt, the settled prefix, and in full every step from the boundary on (the ``window``-th latest
step with outputs; long outputs cut, repeats stubbed as they arrive). Before the boundary an agent
step's text becomes a one-line note beside its calls, its thinking and long inputs are left out
(:mod:`.own`), its outputs stubs where they pay (:mod:`.policy`). The boundary advances only when
the reads saved pay for rewriting the cache and the restores risked (:mod:`.boundary`), or when the
budget forces it. Everything removed comes back verbatim: ``restore(step=N)``, with ``lines="a-b"``
or ``part='text'|'calls'|'thinking'`` (docs/strategies/refold.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import Any

from contextfold.core.errors import ConfigError
from contextfold.core.experience import Experience
from contextfold.core.history import History, Step
from contextfold.core.messages import AssistantMessage
from contextfold.core.meter import PRICE_TABLES
from contextfold.core.view import Elision, RestorePath, View
from contextfold.strategies.refold.boundary import Boundary
from contextfold.strategies.refold.config import RefoldConfig
from contextfold.strategies.refold.cost import CostRule
from contextfold.strategies.refold.entries import Entries
from contextfold.strategies.refold.markers import split_markers
from contextfold.strategies.refold.prefix import (
    Operators,
    PrefixRenderer,
    SessionState,
    groups_of,
    restores_only,
)
from contextfold.strategies.refold.reach import Reach
from contextfold.strategies.refold.renderings import Renderings
from contextfold.strategies.refold.repeats import Repeats
from contextfold.strategies.refold.tail import Tail
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


class RefoldStrategy:
    """Outputs before a boundary become stubs, one line naming restore; every removal restorable.

    Chunked, reversible rendering; also a chain member (``apply``) and a tool provider.

    The glue of observe, render and tools: it learns from each new step (:meth:`_sync`),
    stubs repeats (:mod:`.repeats`) and cuts long outputs (:mod:`.trims`) as they arrive,
    rewriting nothing, asks :class:`~contextfold.strategies.refold.boundary.Boundary` where the
    settled prefix ends (rendered once a step by
    :class:`~contextfold.strategies.refold.prefix.PrefixRenderer`: fold, supersede, mask, dedup),
    shows the steps after it in full, and answers ``restore`` (a line range too).
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
            thinking=not cfg.keep_thinking,
            inputs=cfg.inputs,
        )
        self.rule = CostRule(PRICE_TABLES[cfg.prices], cfg.horizon)
        self._history: History | None = None
        self._upstream: tuple[Elision, ...] = ()  # elisions of an upstream view (chains)
        self._experience: Experience | None = None
        self._ended: History | None = None

    def _reset(self, history: History) -> None:
        self._history, self._state = history, SessionState()
        system = history.system
        prior = self._experience.reach_prior() if self._experience else None
        self._reach = Reach(system.content if system else "", self.config.window, prior=prior)
        self._repeats = repeats = Repeats()
        renderer = PrefixRenderer(
            history, self._state, self.ops, keep=self._reach.drawn, repeats=repeats
        )
        self._settled = Renderings(renderer)
        self._trims = Trims(self.config.cut)
        self._tail = Tail(history, repeats)
        self._boundary = Boundary(
            history,
            self.config,
            self.rule,
            state=self._state,
            reach=self._reach,
            repeats=repeats,
            renderings=self._settled,
            tail=self._tail,
        )
        self._observed = 0  # steps learned from
        self._checked = 0  # steps looked at for repeats and cuts
        self.restores = 0

    # -- protocol ------------------------------------------------------------------------
    def observe(self, step: Step, history: History) -> None:
        self._sync(history)

    def render(self, history: History, budget: int | None) -> View:
        self._sync(history)
        self._upstream = ()
        self._find_new(history)
        return self._render(budget, partial(self._trims.step_entries, history))

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
        calls = max(self._boundary.calls, calls_made(history) - 1)  # each call left its reply
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
        return self._render(budget, lambda i: groups.get(i, []))

    def split_markers(self, text: str) -> tuple[str, str]:
        """The reply as a client is shown it, and the PROGRESS/STALE lines that end it."""
        return split_markers(text)

    @property
    def advances(self) -> int:
        """Advances of the boundary in the current session (forced ones included)."""
        return self._boundary.advances if self._history is not None else 0

    @property
    def forced_compactions(self) -> int:
        """Changes the budget forced in the current session."""
        return self._boundary.forced_compactions if self._history is not None else 0

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
                if drawn >= self._boundary.prefix.boundary:
                    self._settled.mark(drawn)
            for changed in self._state.learn(step, supersede=self.ops.supersede):
                self._settled.mark(changed)
                for source in self._repeats.pointed(changed):  # now superseded past its repeat
                    self._settled.mark(source)
        self._observed = len(history)

    def _find_new(self, history: History) -> None:
        """Before new outputs enter the view: stub those that repeat one shown in full
        (:mod:`.repeats`), cut the long ones (:mod:`.trims`)."""
        repeats, shown = self._repeats, self._settled.renderer.seen.indexed
        for step in history.steps[self._checked : self._observed]:
            restoring = isinstance(step.message, AssistantMessage) and restores_only(step.message)
            if self.ops.dedup and not restoring:
                repeats.find(step, history, shown, self._boundary.prefix.boundary)
            stubbed = any(repeats.stub(step.index, r.tool_call_id) for r in step.results)
            self._trims.find(step, history, skip=stubbed)
        self._checked = self._observed

    # -- rendering -----------------------------------------------------------------------
    def _render(self, budget: int | None, entries: Entries) -> View:
        p, labels = self._boundary.place(entries, budget), self._boundary.folding
        tail = self._tail.entries(p.boundary, self._observed, entries, labels=labels)
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
