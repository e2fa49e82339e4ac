"""``full``: the ReAct baseline. Every step, verbatim, append-only; nothing elided (so the
whole view is settled: the next one only appends)."""

from __future__ import annotations

from typing import Literal

from contextfold.core.history import History, Step
from contextfold.core.view import View, ViewBuilder
from contextfold.strategies.base import StrategyConfig

__all__ = ["FullConfig", "FullStrategy"]


class FullConfig(StrategyConfig):
    type: Literal["full"] = "full"


class FullStrategy:
    """Sends the whole history, verbatim (the baseline).

    Rendering is incremental: each step is added to the cached view once, so a render costs
    one tuple copy, not a walk over the history."""

    Config = FullConfig

    def __init__(self, config: FullConfig | None = None) -> None:
        self.config = config or FullConfig()
        self.name = "full"
        self._history: History | None = None
        self._builder = ViewBuilder()
        self._seen = 0

    def observe(self, step: Step, history: History) -> None:
        """Nothing to track: render catches up with the history lazily."""

    def render(self, history: History, budget: int | None) -> View:
        if history is not self._history or self._seen > len(history):
            self._history, self._builder, self._seen = history, ViewBuilder(), 0
            self._builder.add_system(history)
        for step in history.steps[self._seen :]:
            self._builder.add_step(step)
        self._seen = len(history)
        return self._builder.build(self.name, settled=len(self._builder.messages))
