"""``supersede``: when the agent reads the same resource again, the earlier copy becomes a stub.

A resource is one tool with one set of arguments (the same file view, the same command): the
key is the tool name and its arguments, canonicalised (JSON keys sorted, whitespace in a
``command`` collapsed). Every earlier output of a key that was run again later is replaced by a
stub naming the step that holds the newer copy; the original is restorable with
``restore(step=N)``. Used inside ``refold`` and on its own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage, ToolCall, ToolMessage
from contextfold.core.view import RestorePath, View
from contextfold.strategies.base import StrategyConfig
from contextfold.strategies.restore import RESTORE_TOOL, call_restore
from contextfold.strategies.transform import Edit, TransformStrategy, rewrite, tool_stub

__all__ = ["SupersedeConfig", "SupersedeStrategy", "resource_key", "superseded_stub"]


def resource_key(call: ToolCall) -> str:
    """The resource a call reads: its tool name and canonical arguments."""
    try:
        args = json.loads(call.arguments)
    except (json.JSONDecodeError, RecursionError):  # the model's text: it may be anything
        return f"{call.name}:{' '.join(call.arguments.split())}"
    if isinstance(args, dict) and isinstance(args.get("command"), str):
        args = {**args, "command": " ".join(args["command"].split())}
    return f"{call.name}:{json.dumps(args, sort_keys=True, ensure_ascii=False)}"


def superseded_stub(step: int, newer: int, tool: str | None) -> str:
    what = f"same {tool} call" if tool else "same call"
    return (
        f"[step {step}] output superseded by step {newer} ({what}); restore(step={step}) shows it"
    )


class SupersedeConfig(StrategyConfig):
    type: Literal["supersede"] = "supersede"


class SupersedeStrategy(TransformStrategy):
    """Earlier outputs of a re-run call become stubs pointing to the newest one."""

    Config = SupersedeConfig

    def __init__(self, config: SupersedeConfig | None = None) -> None:
        super().__init__()
        self.config = config or SupersedeConfig()
        self.name = "supersede"

    def tools(self) -> list[dict[str, Any]]:
        """``restore``: every stub this strategy writes names it."""
        return [RESTORE_TOOL]

    def call_tool(self, name: str, arguments: Mapping[str, Any], history: History) -> str:
        return call_restore(self.name, name, arguments, history)

    def apply(self, view: View, history: History, budget: int | None) -> View:
        latest: dict[str, int] = {}
        keys: dict[tuple[int, str], str] = {}  # (step, call id): call ids may repeat across steps
        for msg, prov in zip(view.messages, view.provenance, strict=True):
            if isinstance(msg, AssistantMessage) and prov.steps:
                for call in msg.tool_calls:
                    keys[prov.steps[0], call.id] = key = resource_key(call)
                    latest[key] = prov.steps[0]
        edits = {}
        for pos, (msg, prov) in enumerate(zip(view.messages, view.provenance, strict=True)):
            if not (isinstance(msg, ToolMessage) and prov.steps):
                continue
            step = prov.steps[0]
            newer = latest.get(keys.get((step, msg.tool_call_id), ""), -1)
            if newer > step:
                stub = tool_stub(msg, superseded_stub(step, newer, msg.name))
                edits[pos] = Edit(stub, "supersede", RestorePath.step(step))
        return rewrite(view, edits, history, strategy=self.name)
