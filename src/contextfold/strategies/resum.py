"""``resum``: ReSum (a U-Fold baseline): periodic summary that replaces the whole history.

When the view passes ``trigger`` (75%) of the budget, the whole history since the last summary
is folded, with that summary, into a new summary of the evidence gathered so far; the agent
continues from the task, the summary and the latest user message. Folded steps stay
restorable with ``restore(step=N)``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from contextfold.core.history import History
from contextfold.strategies.folding.folder import Folder
from contextfold.strategies.folding.summarized import Plan, SummarizingConfig, SummarizingStrategy

__all__ = ["ResumConfig", "ResumStrategy"]

INSTRUCTION = (
    "You summarise an AI agent's progress so that it can restart from your summary alone. "
    "From the previous summary, if any, and the steps that follow, write the evidence "
    "gathered so far: what the task asks, every verified fact with its exact values and "
    "identifiers, which actions were taken and their outcomes, open questions, and the next "
    'step. Do not invent anything. Answer with one JSON object: {"summary": "..."}.'
)


class ResumConfig(SummarizingConfig):
    type: Literal["resum"] = "resum"
    trigger: float = Field(0.75, gt=0.0, le=1.0, description="Summarise above this budget share.")


class ResumStrategy(SummarizingStrategy):
    """At the budget trigger, everything so far becomes one summary."""

    Config = ResumConfig
    kind = "resum"
    instruction = INSTRUCTION

    def __init__(self, config: ResumConfig, *, folder: Folder) -> None:
        super().__init__(config, folder=folder)
        self.config: ResumConfig = config

    def plan(self, history: History, budget: int, cut: int) -> Plan | None:
        if self.render(history, budget).total_tokens <= self.config.trigger * budget:
            return None
        return Plan(cut, len(history)) if len(history) > cut else None

    def forced_plan(self, history: History, cut: int) -> Plan | None:
        return Plan(cut, len(history)) if len(history) > cut else None
