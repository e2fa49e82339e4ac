"""``compact``: the compaction of coding agents (ReFold's B.1 baseline, with a folder model).

When the view passes ``trigger`` (75%) of the budget, the oldest ``share`` (60%) of the tokens
not yet summarised, cut at a step boundary (a step keeps its tool calls and their results
together), is folded into the running summary by the folder; the recent steps stay verbatim.
Every folded step stays restorable with ``restore(step=N)``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from contextfold.core.history import History
from contextfold.strategies.folding.folder import Folder
from contextfold.strategies.folding.summarized import Plan, SummarizingConfig, SummarizingStrategy

__all__ = ["CompactConfig", "CompactStrategy"]

INSTRUCTION = (
    "You compact the working memory of an AI agent. You get the summary written so far and "
    "the oldest steps of its work that are about to leave its context. Write one updated "
    "summary that replaces both: the task and the user's requirements, every fact, number, "
    "identifier, file path and name the agent learned, what it did and what each action "
    "showed, decisions taken, errors met, and what is still to do. Keep exact values. Do not "
    'invent anything. Answer with one JSON object: {"summary": "..."}.'
)


class CompactConfig(SummarizingConfig):
    type: Literal["compact"] = "compact"
    trigger: float = Field(0.75, gt=0.0, le=1.0, description="Compact above this budget share.")
    share: float = Field(0.6, gt=0.0, lt=1.0, description="Share of unsummarised tokens folded.")


class CompactStrategy(SummarizingStrategy):
    """Folds the oldest part of the history into a summary when the view nears the budget."""

    Config = CompactConfig
    kind = "compact"
    instruction = INSTRUCTION

    def __init__(self, config: CompactConfig, *, folder: Folder) -> None:
        super().__init__(config, folder=folder)
        self.config: CompactConfig = config

    def plan(self, history: History, budget: int, cut: int) -> Plan | None:
        if self.render(history, budget).total_tokens <= self.config.trigger * budget:
            return None
        tail = history.steps[cut:]
        target = self.config.share * sum(s.total_tokens for s in tail)
        end, folded = cut, 0
        for step in tail[:-1]:  # the latest step always stays verbatim
            if folded >= target:
                break
            folded += step.total_tokens
            end = step.index + 1
        return Plan(cut, end) if end > cut else None
