"""``iterresearch``: IterResearch (a U-Fold baseline): Markovian state reconstruction.

Each round the context is rebuilt from the task, an evolving report and only the last action
and its observation (with the latest user message, if it is older). Before every call, the
folder updates the report with the steps that left that window since the last round. Every
step behind the report stays restorable with ``restore(step=N)``.
"""

from __future__ import annotations

from typing import Literal

from contextfold.core.history import History
from contextfold.core.messages import UserMessage
from contextfold.strategies.folding.folder import Folder
from contextfold.strategies.folding.summarized import Plan, SummarizingConfig, SummarizingStrategy

__all__ = ["IterResearchConfig", "IterResearchStrategy"]

INSTRUCTION = (
    "You maintain the evolving research report of an AI agent that sees only this report and "
    "its latest action. Update the report with the new steps: keep what is established (exact "
    "values, identifiers, names, the user's requirements), add what the new steps showed, drop "
    "what they made obsolete, and say what remains to be done. Do not invent anything. Answer "
    'with one JSON object: {"summary": "<the updated report>"}.'
)


class IterResearchConfig(SummarizingConfig):
    type: Literal["iterresearch"] = "iterresearch"


class IterResearchStrategy(SummarizingStrategy):
    """Task + report + the last step; the report is updated every round."""

    Config = IterResearchConfig
    kind = "report"
    instruction = INSTRUCTION

    def __init__(self, config: IterResearchConfig, *, folder: Folder) -> None:
        super().__init__(config, folder=folder)

    def plan(self, history: History, budget: int, cut: int) -> Plan | None:
        end = len(history) - 1  # the last action and its observation stay verbatim
        return Plan(cut, end) if end > cut else None

    def _summary_message(self, summary: str, cut: int) -> UserMessage:
        return UserMessage(
            f"[Report on steps 0-{cut - 1}, kept by {self.name}; restore(step=N) shows any "
            f"of them verbatim]\n{summary}"
        )
