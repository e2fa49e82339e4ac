"""``mask``: observation masking (The Complexity Trap; ReFold's B.1 baseline).

Tool results of all but the last ``keep`` steps that carry observations are replaced by a short
placeholder; the agent's own reasoning and actions stay. The placeholders change at every step
(the masked region grows), so the prompt's prefix changes with it: this is the per-step
baseline that cache-aware strategies are judged against. By default nothing can be restored
(``reversible: false``); with ``reversible: true`` each placeholder names its restore path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from contextfold.core.history import History
from contextfold.core.messages import ToolMessage
from contextfold.core.view import RestorePath, View
from contextfold.strategies.base import StrategyConfig
from contextfold.strategies.restore import RESTORE_TOOL, call_restore
from contextfold.strategies.transform import (
    Edit,
    TransformStrategy,
    observation_steps,
    rewrite,
    tool_stub,
)

__all__ = ["MaskConfig", "MaskStrategy"]


class MaskConfig(StrategyConfig):
    type: Literal["mask"] = "mask"
    keep: int = Field(10, ge=0, description="Steps whose observations stay in full (N).")
    placeholder: str = Field(
        "[output of step {step} omitted]", description="What a masked output becomes."
    )
    reversible: bool = Field(False, description="Stubs name restore(step=N), which is offered.")


class MaskStrategy(TransformStrategy):
    Config = MaskConfig

    def __init__(self, config: MaskConfig | None = None) -> None:
        super().__init__()
        self.config = config or MaskConfig()
        self.name = "mask"

    def tools(self) -> list[dict[str, Any]]:
        """``restore`` when the masks are reversible (their stubs name it); else none."""
        return [RESTORE_TOOL] if self.config.reversible else []

    def call_tool(self, name: str, arguments: Mapping[str, Any], history: History) -> str:
        if not self.config.reversible:
            return f"error: mask offers no tool {name!r} (it is not reversible)"
        return call_restore(self.name, name, arguments, history)

    def apply(self, view: View, history: History, budget: int | None) -> View:
        steps = observation_steps(view)
        masked = set(steps[: max(len(steps) - self.config.keep, 0)])
        edits = {}
        for pos, (msg, prov) in enumerate(zip(view.messages, view.provenance, strict=True)):
            if isinstance(msg, ToolMessage) and masked.intersection(prov.steps):
                step = prov.steps[0]
                text = self.config.placeholder.format(step=step)
                restore = RestorePath.step(step) if self.config.reversible else None
                edits[pos] = Edit(tool_stub(msg, text), "mask", restore)
        return rewrite(view, edits, history, strategy=self.name)
