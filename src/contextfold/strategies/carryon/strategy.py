"""``carryon``: object-oriented context (CarryOn): carriers, execution context, live tail.

A fold commits only after validation and a refused one changes nothing, so the view never holds
an unchecked summary; the state is derived from the fold log alone (docs/strategies/carryon.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from contextfold.core.errors import ConfigError
from contextfold.core.experience import Experience
from contextfold.core.folds import FoldRecord
from contextfold.core.history import History, Step
from contextfold.core.messages import UserMessage
from contextfold.core.meter import PRICE_TABLES
from contextfold.core.view import View
from contextfold.strategies.carryon.gate import Gate, asked_folds
from contextfold.strategies.carryon.grounder import Grounder
from contextfold.strategies.carryon.pipeline import Pipeline, Switches
from contextfold.strategies.carryon.state import CarryState, last_commit, parse_state
from contextfold.strategies.carryon.view import context_text
from contextfold.strategies.folding.folder import Folder
from contextfold.strategies.folding.source import FolderConfig
from contextfold.strategies.folding.steps import estimate_tokens
from contextfold.strategies.folding.view import folded_view
from contextfold.strategies.refold.cost import CostRule
from contextfold.strategies.restore import RESTORE_TOOL, call_restore, calls_made

__all__ = ["CarryOnConfig", "CarryOnStrategy"]


class CarryOnConfig(FolderConfig):
    type: Literal["carryon"] = "carryon"
    threshold: int = Field(6000, ge=1, description="Live-tail tokens (chars/4) that trigger.")
    max_doublings: int = Field(6, ge=0, description="Threshold doublings after empty folds.")
    budget: int = Field(32000, ge=1, description="Budget in tokens when none is given.")
    tracker_max_tokens: int = Field(2048, ge=64, description="Tracker output limit.")
    compiler_max_tokens: int = Field(8192, ge=64, description="Compiler output limit.")
    digest_tokens: int = Field(
        250, ge=40, description="Most tokens of one tail step the tracker reads (its digest)."
    )
    carriers: bool = Field(True, description="Keep carriers (false: the EC-only ablation).")
    ec: bool = Field(True, description="Keep the execution context (false: carriers only).")
    workspace: str | None = Field(None, description="Directory the grounder reads.")
    ungrounded: Literal["compile", "refuse"] = Field(
        "compile", description="External objects when there is no workspace to check."
    )
    gate: Literal["cost", "none"] = Field(
        "cost", description="Ask the folder only when a fold could pay (none: always)."
    )
    prices: str = Field("default", description="Price table the cost gate uses.")


class CarryOnStrategy:
    """Carriers + execution context from the last committed fold, then the live tail.

    The view is ``system, [task], context, [latest user], live tail``: the context message holds
    the carriers and execution context the last accepted fold committed, and every step since
    follows verbatim; every retired step is restorable. A fold (tracker, grounder, compiler,
    validation: :class:`~contextfold.strategies.carryon.pipeline.Pipeline`) runs outside ``render``
    when the live tail passes ``threshold`` tokens and commits as one fold record; ``gate=cost``
    asks the folder only when a fold could pay (:mod:`~.gate`).
    """

    Config = CarryOnConfig

    def __init__(
        self, config: CarryOnConfig, *, folder: Folder, grounder: Grounder | None = None
    ) -> None:
        if config.prices not in PRICE_TABLES:
            known = ", ".join(PRICE_TABLES)
            raise ConfigError(f"carryon: unknown price table {config.prices!r}; known: {known}")
        self.config = config
        self.name = config.type
        self.folder = folder
        self.gate = (
            Gate(
                CostRule(PRICE_TABLES[config.prices]),
                folder,
                digest_tokens=config.digest_tokens,
                tracker_tokens=config.tracker_max_tokens,
                compiler_tokens=config.compiler_max_tokens,
            )
            if config.gate == "cost"
            else None
        )
        root = Path(config.workspace) if config.workspace else None
        self.grounder = grounder or Grounder(root)
        self.forced_compactions = 0
        self._forced = False
        # the last commit parsed, and its context message: render runs before every model
        # call, and the state only changes when a fold commits
        self._parsed: tuple[FoldRecord, CarryState, UserMessage] | None = None
        self._experience: Experience | None = None
        self._ended: History | None = None

    def state(self, history: History) -> tuple[CarryState, int]:
        """The committed state and the folds refused since it was committed."""
        record, refused = last_commit(history.folds, self.name)
        if record is None:
            return CarryState(), refused
        return self._parse(record)[1], refused

    def _parse(self, record: FoldRecord) -> tuple[FoldRecord, CarryState, UserMessage]:
        if self._parsed is None or self._parsed[0] is not record:
            state = parse_state(record)
            c = self.config
            text = context_text(state, name=self.name, carriers=c.carriers, ec=c.ec)
            self._parsed = (record, state, UserMessage(text))
        return self._parsed

    def threshold(self, history: History, budget: int | None = None) -> int:
        refused = self.state(history)[1]
        base = min(self.config.threshold, budget // 2) if budget else self.config.threshold
        return base * int(2 ** min(refused, self.config.max_doublings))

    def observe(self, step: Step, history: History) -> None:
        """Nothing to do: what is due is decided in :meth:`fold`, from the history."""

    def share(self, experience: Experience) -> None:
        """The gate learns the calls to come and the commit rate from ended sessions."""
        self._experience = experience
        if self.gate is not None:
            rule = replace(self.gate.rule, experience=experience)
            self.gate = replace(self.gate, rule=rule, experience=experience)

    def end(self, history: History) -> None:
        if self._experience is None or self._ended is history:
            return
        self._ended = history
        asked = asked_folds(history, self.name)
        committed = sum(r.accepted for r in asked)
        self._experience.record(calls=calls_made(history), asked=len(asked), committed=committed)

    def fold(self, history: History, budget: int | None) -> list[FoldRecord]:
        state, _ = self.state(history)
        end, forced = len(history), self._forced
        if forced:
            self._forced, end = False, len(history) - 1
        elif sum(estimate_tokens(s) for s in history.steps[state.cut :]) <= self.threshold(
            history, budget
        ):
            return []
        if end <= state.cut:
            return []
        record = None if forced else self._not_worth_it(history, state, end, budget)
        if record is None:
            record = self.pipeline().run(history, state, end)
        history.record_fold(record)
        return [record]

    def _not_worth_it(
        self, history: History, state: CarryState, end: int, budget: int | None
    ) -> FoldRecord | None:
        """The gate's refusal when even the best fold cannot pay (``gate=cost``), or None."""
        if self.gate is None:
            return None
        view = self.render(history, budget)
        if budget is not None and view.total_tokens > budget:
            return None
        figures = self.gate.weigh(history, view, state.cut, end)
        if figures["pays"]:
            return None
        reason = (
            f"not asked: retiring the live tail ({figures['retired']:,} tokens) cannot pay "
            f"for the folder calls (~{figures['folder']:,} tokens) and rewriting "
            f"{figures['rewritten']:,} cached tokens"
        )
        output = {"stage": "gate", "asked": False, **figures}
        return FoldRecord(self.name, "carryon", state.cut, end, len(history), False, output, reason)

    def pipeline(self) -> Pipeline:
        c = self.config
        switches = Switches(
            carriers=c.carriers,
            ec=c.ec,
            ungrounded=c.ungrounded == "compile",
            tracker_tokens=c.tracker_max_tokens,
            compiler_tokens=c.compiler_max_tokens,
            digest_tokens=c.digest_tokens,
        )
        return Pipeline(self.name, self.folder, self.grounder, switches)

    def ground_in(self, root: Path) -> None:
        """Check external objects against the files under ``root`` from now on (the files'
        state now is the task's start)."""
        self.grounder = Grounder(root)

    def compact(self, history: History, budget: int) -> bool:
        """Fold everything but the latest step at the next :meth:`fold` (over the budget)."""
        if len(history) - 1 <= self.state(history)[0].cut:
            return False
        self._forced = True
        self.forced_compactions += 1
        return True

    def tools(self) -> list[dict[str, Any]]:
        return [RESTORE_TOOL]

    def call_tool(self, name: str, arguments: Mapping[str, Any], history: History) -> str:
        return call_restore(self.name, name, arguments, history)

    def render(self, history: History, budget: int | None) -> View:
        record, _ = last_commit(history.folds, self.name)
        if record is None:
            return folded_view(history, 0, None, reason="carryon", strategy=self.name)
        _, state, note = self._parse(record)
        return folded_view(history, state.cut, note, reason="carryon", strategy=self.name)
