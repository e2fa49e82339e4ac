"""``summary``: the generic summary baseline of CarryOn (its GS).

A running summary of everything before the live tail. When the live tail passes ``threshold``
(6,000) estimated tokens (characters / 4, reasoning left out; or half the budget when that is
smaller, so the fold comes before the budget is hit), the folder rewrites the summary
from the previous one and the whole live tail, which then leaves the view. A fold that
produces nothing usable doubles the threshold (at most 6 times); a good one resets it.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from contextfold.core.folds import FoldRecord
from contextfold.core.history import History
from contextfold.strategies.folding.folder import Folder
from contextfold.strategies.folding.steps import estimate_tokens
from contextfold.strategies.folding.summarized import Plan, SummarizingConfig, SummarizingStrategy

__all__ = ["SummaryConfig", "SummaryStrategy", "ThresholdConfig"]

INSTRUCTION = (
    "You keep the running summary of an AI agent's work. Read the previous summary, if any, "
    "and every step that follows, in order, and write one updated summary from which the agent "
    "can continue the task together with its most recent messages. Go through what actually "
    "happened, in detail: the task, the user's requirements, what was tried and what it "
    "showed, the exact values, identifiers and names found, and what remains. Do not invent "
    'anything. Answer with one JSON object: {"summary": "..."}.'
)


class ThresholdConfig(SummarizingConfig):
    """Options of a summary refreshed by the live tail's size (``summary``, ``cgs``)."""

    threshold: int = Field(6000, ge=1, description="Live-tail tokens (chars/4) that trigger.")
    max_doublings: int = Field(6, ge=0, description="Threshold doublings after empty folds.")


class SummaryConfig(ThresholdConfig):
    type: Literal["summary"] = "summary"


class SummaryStrategy(SummarizingStrategy):
    """Replaces everything before the live tail with a summary, refreshed by size."""

    Config: ClassVar[type[ThresholdConfig]] = SummaryConfig
    kind = "summary"
    instruction = INSTRUCTION

    def __init__(self, config: ThresholdConfig, *, folder: Folder) -> None:
        super().__init__(config, folder=folder)
        self.config: ThresholdConfig = config

    def threshold(self, history: History, budget: int | None = None) -> int:
        """The trigger now: ``threshold``, or half the budget when that is smaller (so a fold
        comes before the budget is hit), doubled for each rejected fold since the last
        accepted one."""
        rejected = len(self.state(history)[2])
        base = min(self.config.threshold, budget // 2) if budget else self.config.threshold
        return base * int(2 ** min(rejected, self.config.max_doublings))

    def may_retry(self, history: History, rejected: list[FoldRecord]) -> bool:
        return True  # the doubled threshold is the back-off

    def plan(self, history: History, budget: int, cut: int) -> Plan | None:
        live = sum(estimate_tokens(s) for s in history.steps[cut:])
        if live <= self.threshold(history, budget):
            return None
        return Plan(cut, len(history))
