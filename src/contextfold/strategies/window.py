"""``window``: keep the last N turns (ReFold's B.1 baseline "last N turns").

The view keeps the system message, the first user step (the task), the latest user message
(when it is older than the window, its step stays too) and the last ``keep`` steps; every other
step is dropped whole, an assistant message together with its tool results, so no call is left
unanswered. Dropped steps cannot be restored from the view (``restore`` is None). The window
slides by one step per turn, so the prompt's prefix changes at every call once it is full.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from contextfold.core.history import History
from contextfold.core.view import View
from contextfold.strategies.base import StrategyConfig
from contextfold.strategies.transform import Edit, TransformStrategy, rewrite

__all__ = ["WindowConfig", "WindowStrategy", "window_steps"]


class WindowConfig(StrategyConfig):
    type: Literal["window"] = "window"
    keep: int = Field(10, ge=0, description="Most recent steps kept whole (N).")


def window_steps(history: History, keep: int) -> set[int]:
    """Indices of the steps a window of ``keep`` steps shows: the last ``keep``, the first user
    step and the latest user step."""
    kept = set(range(max(len(history) - keep, 0), len(history)))
    first_user = next((s.index for s in history if s.kind == "user"), None)
    for index in (first_user, history.latest_user_index):
        if index is not None:
            kept.add(index)
    return kept


class WindowStrategy(TransformStrategy):
    """Drops whole steps outside the window; keeps the task and the latest user message."""

    Config = WindowConfig

    def __init__(self, config: WindowConfig | None = None) -> None:
        super().__init__()
        self.config = config or WindowConfig()
        self.name = "window"

    def apply(self, view: View, history: History, budget: int | None) -> View:
        kept = window_steps(history, self.config.keep)
        drop = Edit(None, "window", None)
        edits = {
            pos: drop
            for pos, prov in enumerate(view.provenance)
            if prov.steps and not kept.intersection(prov.steps)
        }
        return rewrite(view, edits, history, strategy=self.name)
