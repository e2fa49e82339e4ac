"""``quiet-passes``: a test run that passed says so in one line, restorable.

An example of a strategy of one's own (docs/strategies/custom.md). A tool output older than
the last ``keep`` steps that reports passing tests and no failure becomes a one-line stub;
``restore(step=N)`` gives it back verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from contextfold.core.history import History
from contextfold.core.messages import ToolMessage
from contextfold.core.view import RestorePath, View
from contextfold.strategies.base import StrategyConfig
from contextfold.strategies.restore import RESTORE_TOOL, call_restore
from contextfold.strategies.transform import Edit, TransformStrategy, rewrite, tool_stub

PASSED = re.compile(r"\b\d+ passed\b")
FAILED = re.compile(r"\b(failed|error)", re.IGNORECASE)


class QuietPassesConfig(StrategyConfig):
    type: Literal["quiet-passes"] = "quiet-passes"
    keep: int = Field(2, ge=0, description="Most recent steps left as they are.")


class QuietPasses(TransformStrategy):
    """Stubs old outputs of passing test runs (it rewrites full's view)."""

    Config = QuietPassesConfig

    def __init__(self, config: QuietPassesConfig | None = None) -> None:
        super().__init__()
        self.config = config or QuietPassesConfig()
        self.name = "quiet-passes"

    def tools(self) -> list[dict[str, Any]]:
        return [RESTORE_TOOL]  # every stub names restore, so the strategy offers it

    def call_tool(self, name: str, arguments: Mapping[str, Any], history: History) -> str:
        return call_restore(self.name, name, arguments, history)

    def apply(self, view: View, history: History, budget: int | None) -> View:
        recent = len(history) - self.config.keep
        edits = {}
        for pos, (msg, prov) in enumerate(zip(view.messages, view.provenance, strict=True)):
            if not isinstance(msg, ToolMessage) or not prov.steps or prov.steps[0] >= recent:
                continue
            passed = PASSED.search(msg.content)
            if passed and not FAILED.search(msg.content):
                step = prov.steps[0]
                stub = f"[tests: {passed.group(0)}; restore(step={step}) shows the output]"
                restore = RestorePath.step(step)
                edits[pos] = Edit(tool_stub(msg, stub), "quiet-passes", restore)
        return rewrite(view, edits, history, strategy=self.name)
