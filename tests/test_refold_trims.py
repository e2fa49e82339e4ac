"""refold cuts a long output once, as it arrives, and gives the rest back by line range."""

from __future__ import annotations

import itertools
import json

from contextfold.bench.replay import replay
from contextfold.core.history import History
from contextfold.core.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.core.meter import PRICE_TABLES, get_profile
from contextfold.core.tokens import ApproxCounter
from contextfold.core.view import View
from contextfold.importers.base import Trajectory
from contextfold.strategies.refold import RefoldConfig, RefoldStrategy
from contextfold.strategies.refold.trims import BLOCK
from tests.test_refold_reach import views

SOURCE = "\n".join(
    f"def parse_args_{n}(): return {n}" if n != 120 else "def separability_matrix(): pass"
    for n in range(200)
)
"""A file of 200 lines (about 1,400 tokens); line 121 defines what the task names."""


def shell(n: int, command: str) -> AssistantMessage:
    call = ToolCall(f"c{n}", "bash", json.dumps({"command": command}))
    return AssistantMessage(None, tool_calls=(call,))


def session(extra: int = 3) -> History:
    """The task names ``separability_matrix``; step 1 reads the file; ``extra`` short
    commands follow."""
    history = History(SystemMessage("You fix code."), counter=ApproxCounter())
    history.append(UserMessage("Fix separability_matrix in models.py."))
    history.append(shell(1, "cat models.py"), ToolMessage(SOURCE, "c1"))
    for n in range(2, 2 + extra):
        history.append(shell(n, f"ls dir{n}"), ToolMessage(f"file{n}.txt", f"c{n}"))
    history.append(AssistantMessage("Done."))
    return history


def shown_output(view: View, call_id: str = "c1") -> str:
    [text] = [
        m.content for m in view.messages if isinstance(m, ToolMessage) and m.tool_call_id == call_id
    ]
    return text


def test_a_long_output_is_cut_from_the_first_view_that_holds_it_and_never_changes() -> None:
    _, shown = views(session(), RefoldStrategy(RefoldConfig(every=1000)))  # no advance
    first = shown_output(shown[1])
    lines = first.splitlines()
    # about 250 tokens: the head, the tail, the line the task names, and markers between
    assert lines[0] == "def parse_args_0(): return 0"
    assert lines[-1] == "def parse_args_199(): return 199"
    assert "def separability_matrix(): pass" in lines
    assert sum(line.startswith("[lines ") for line in lines) == 2
    assert 'restore(step=1, lines="' in first and len(first) < len(SOURCE) // 3
    # every prompt extends the one before: the cut never rewrote what the cache holds
    for before, after in itertools.pairwise(shown):
        assert after.messages[: len(before.messages)] == before.messages


def test_what_the_cut_leaves_out_is_restorable_by_blocks_of_lines() -> None:
    history = session()
    refold, shown = views(history)
    trims = [e for e in shown[-1].elisions if e.reason == "trim"]
    assert trims and all(e.steps == (1,) and e.restore is not None for e in trims)
    ranges = [str(e.restore.as_dict()["lines"]) for e in trims if e.restore]
    spans = [tuple(int(x) for x in r.split("-")) for r in ranges]
    assert all(1 <= last - first + 1 <= BLOCK for first, last in spans)
    kept = history.count(ToolMessage(shown_output(shown[1]), "c1"))
    assert sum(e.tokens for e in trims) == history[1].tokens[1] - kept
    first, last = spans[0]
    text = refold.call_tool("restore", {"step": 1, "lines": f"{first}-{last}"}, history)
    want = SOURCE.splitlines()[first - 1 : last]
    assert text.splitlines() == [f"[step 1, lines {first}-{last} of 200]", *want]
    assert refold.call_tool("restore", {"step": 1}, history) == SOURCE  # the whole, verbatim
    bad = refold.call_tool("restore", {"step": 1, "lines": "150-900"}, history)
    assert bad.startswith("error: step 1 has lines 1 to 200")


def test_short_outputs_restores_and_cut_zero_are_left_whole() -> None:
    history = session()
    history.append(shell(9, "restore"), ToolMessage("x", "c9"))  # a short output
    restored = History(history.system, counter=history.counter)
    for step in history:
        restored.append_step(step)
    restore = AssistantMessage(None, tool_calls=(ToolCall("r", "restore", '{"step": 1}'),))
    restored.append(restore, ToolMessage(SOURCE, "r"))
    restored.append(AssistantMessage("Done again."))
    _, shown = views(restored)
    assert shown_output(shown[-1], "r") == SOURCE  # what a restore brought back, whole
    assert shown_output(shown[-1], "c9") == "x"
    _, plain = views(session(), RefoldStrategy(RefoldConfig(cut=0)))
    assert shown_output(plain[1]) == SOURCE
    assert not [e for v in plain for e in v.elisions if e.reason == "trim"]


def test_replay_restores_only_the_block_holding_a_value_a_call_needs() -> None:
    """The agent's last command names ``parse_args_150``, which only line 151 of the file
    held: refold's view cut it, so replay restores the block of lines holding it."""
    steps = list(_steps(session(extra=2)))[:-1]
    steps.append((shell(9, "grep -n parse_args_150 models.py"), ToolMessage("151:x", "c9")))
    traj = Trajectory("t", "test", SystemMessage("You fix code."), tuple(steps))
    result = replay(
        [traj],
        ["full", "refold"],
        counter=ApproxCounter(),
        profile=get_profile("qwen3-8b"),
        prices=PRICE_TABLES["default"],
    )
    refold = result.strategies["refold"].summary()
    assert refold["restores"] == 1 and refold["args_restorable"] > 0
    full = result.strategies["full"].summary()
    assert full["restores"] == 0
    # the restore brought back at most one block: the refold prompts stay below full's
    assert refold["prompt_tokens"] < full["prompt_tokens"]


def _steps(history: History) -> list[tuple[ToolMessage | AssistantMessage | UserMessage, ...]]:
    return [s.messages for s in history]  # type: ignore[misc]
