"""A refold stub names the line count of the output it stands for, not of the cut rendering
the view showed before it (the count ``restore`` gives back)."""

from __future__ import annotations

import json
import re

from contextfold.agent import Agent
from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage, SystemMessage, ToolCall, ToolMessage
from contextfold.envs import FilesEnv
from contextfold.models import ScriptedModel
from contextfold.strategies.registry import build_strategy

LONG = "\n".join(f"line {i}: {'x' * 30}" for i in range(2000))


def _act(n: int, tool: str, **args: str) -> AssistantMessage:
    return AssistantMessage(None, tool_calls=(ToolCall(f"c{n}", tool, json.dumps(args)),))


def test_a_masked_long_outputs_stub_counts_the_outputs_own_lines() -> None:
    replies = [_act(1, "read_file", path="long.txt"), *(_act(n, "list_files") for n in range(2, 9))]
    model = ScriptedModel([*replies, AssistantMessage("done")])
    strategy = build_strategy({"type": "refold", "advance": "fixed", "every": 1, "window": 1})
    history = History(SystemMessage("You read files."))
    agent = Agent(model, strategy, FilesEnv({"long.txt": LONG}), history=history, keep_views=True)
    agent.run("Read long.txt.")
    assert history[1].results[0].content.count("\n") + 1 == 2000
    shown = [
        m.content for v in agent.result.views for m in v.messages if isinstance(m, ToolMessage)
    ]
    counts = {
        int(n) for s in shown for n in re.findall(r"\[step 1\] output omitted \((\d+) lines", s)
    }
    assert counts == {2000}
