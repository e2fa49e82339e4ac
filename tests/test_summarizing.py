"""compact, summary, resum and iterresearch with ScriptedModel folders: folds, rejections,
back-off, restore, the agent loop, reopening from SQLite, and the meter's fold figures."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from contextfold.agent import Agent
from contextfold.core.history import History
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.core.meter import Meter
from contextfold.core.pipeline import render_checked
from contextfold.core.protocols import Compacting, Folding, Strategy, ToolProvider
from contextfold.core.store import SQLiteStore
from contextfold.core.view import View
from contextfold.envs import FilesEnv
from contextfold.models import ScriptedModel, tool_call
from contextfold.strategies.folding import Folder
from contextfold.strategies.folding.summarized import REFUSALS
from contextfold.strategies.registry import build_strategy

SUMMARY = '{"summary": "read a.py: x = 1; next: answer"}'


def folder(replies: Any) -> Folder:
    return Folder(ScriptedModel(replies))


def strategy(spec: str, replies: Any) -> Strategy:
    from contextfold.strategies.folding import FolderSource

    source = FolderSource(default="scripted")
    built = build_strategy(spec, folders=source)
    built.folder = folder(replies)  # type: ignore[attr-defined]
    return built


def session(steps: int, *, output: str = "line of output\n" * 40) -> History:
    history = History(SystemMessage("You are a coding agent."))
    history.append(UserMessage("Fix the bug in a.py."))
    for i in range(1, steps):
        call = ToolCall(f"c{i}", "bash", json.dumps({"cmd": f"cat f{i}.py"}))
        history.append(
            AssistantMessage(f"Looking at f{i}.py", tool_calls=(call,)),
            ToolMessage(f"f{i}.py:\n{output}", f"c{i}", name="bash"),
        )
    return history


def fold_and_render(s: Strategy, history: History, budget: int | None) -> View:
    assert isinstance(s, Folding)
    s.fold(history, budget)
    return render_checked(s, history, budget)


def test_compact_folds_the_oldest_share_and_keeps_the_task_and_recent_steps() -> None:
    history = session(12)
    s = strategy("compact", [SUMMARY])
    full = render_checked(build_strategy("full"), history, None)
    view = fold_and_render(s, history, full.total_tokens)  # over 75% of the budget
    (record,) = history.folds
    assert record.accepted and record.start == 0 and 0 < record.end < len(history) - 1
    assert view.messages[1] == history[0].message  # the task, verbatim
    assert "read a.py: x = 1" in view.messages[2].content
    assert view.messages[-2:] == history[-1].messages  # the latest step, verbatim
    assert view.total_tokens < full.total_tokens
    folded = {e.steps[0] for e in view.elisions}
    assert folded == set(range(1, record.end))
    assert all(str(e.restore) == f"restore(step={e.steps[0]})" for e in view.elisions)
    assert isinstance(s, ToolProvider)
    assert s.call_tool("restore", {"step": 3}, history) == history[3].results[0].content
    # byte-identical until the next fold: the prefix cache keeps hitting
    assert render_checked(s, history, None).messages == view.messages


def test_compact_does_nothing_under_the_trigger() -> None:
    history = session(3)
    s = strategy("compact", [])  # would raise if asked
    assert isinstance(s, Folding) and s.fold(history, 1_000_000) == []
    assert render_checked(s, history, None).messages == tuple(history.messages())


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("{not json", "invalid output after repair"),
        ('{"summary": ""}', "invalid output after repair"),
        ('{"summary": "' + "word " * 2300 + '"}', "not shorter than what it replaces"),
    ],
)
def test_a_rejected_fold_changes_nothing_and_is_counted(reply: str, reason: str) -> None:
    history = session(12)
    s = strategy("resum", [reply, reply])
    before = render_checked(s, history, None)
    assert isinstance(s, Folding)
    (record,) = s.fold(history, 100)
    assert not record.accepted and reason in (record.reason or "")
    assert record.reason is not None and record.reason.startswith(REFUSALS)  # declared
    assert history.folds == [record]
    assert render_checked(s, history, None).messages == before.messages
    meter = Meter()
    meter.record_folds([record])
    assert meter.fold_summary()["fold_rejected"] == 1


def test_after_a_rejection_the_next_attempt_waits() -> None:
    history = session(6)
    s = strategy("resum", ["{bad", "{bad"] * 4)
    assert isinstance(s, Folding)
    attempts = []
    for i in range(12):
        if s.fold(history, 50):
            attempts.append(len(history))
        history.append(UserMessage(f"more {i}"))
    # 2**k steps after the k-th rejection in a row
    assert attempts == [6, 8, 12, 20][: len(attempts)] and len(attempts) >= 3


def test_summary_threshold_doubles_after_each_empty_fold_and_resets() -> None:
    history = History(SystemMessage("sys"))
    history.append(UserMessage("task"))
    s = strategy("summary threshold=100", ['{"summary": ""}'] * 4 + [SUMMARY])
    assert isinstance(s, Folding)
    thresholds = []
    while not (history.folds and history.folds[-1].accepted):
        history.append(AssistantMessage("note " + "z" * 80 + f" {len(history)}"))
        thresholds.append(s.threshold(history))  # type: ignore[attr-defined]
        s.fold(history, None)
    assert [r.accepted for r in history.folds] == [False, False, True]
    assert sorted(set(thresholds)) == [100, 200, 400]
    spans = [r.end - r.start for r in history.folds]
    assert spans[0] < spans[1] < spans[2]
    assert s.threshold(history) == 100  # type: ignore[attr-defined]  # reset by the commit


def test_resum_replaces_everything_with_task_and_summary() -> None:
    history = session(8)
    history.append(UserMessage("Also check b.py."))
    s = strategy("resum", [SUMMARY])
    view = fold_and_render(s, history, 200)
    assert [m.role for m in view.messages] == ["system", "user", "user", "user"]
    assert view.messages[1].content == "Fix the bug in a.py."
    assert view.messages[3].content == "Also check b.py."  # the latest user message, verbatim


def test_iterresearch_keeps_task_report_and_the_last_step() -> None:
    history = session(5)
    s = strategy("iterresearch", [SUMMARY] * 5)
    view = fold_and_render(s, history, None)
    assert [m.role for m in view.messages] == ["system", "user", "user", "assistant", "tool"]
    assert view.messages[-2:] == history[-1].messages
    assert view.messages[2].content.startswith("[Report on steps 0-3")
    history.append(*session(6)[5].messages)
    view = fold_and_render(s, history, None)
    assert len(history.folds) == 2 and history.folds[1].start == 4
    assert view.messages[-2:] == history[-1].messages


def test_compact_in_the_agent_loop_forced_over_the_budget_and_reopened(tmp_path: Path) -> None:
    env = FilesEnv({f"f{i}.py": "print('x')\n" * 60 for i in range(8)})
    script = [tool_call("read_file", {"path": f"f{i}.py"}, call_id=f"c{i}") for i in range(8)]
    store = SQLiteStore(tmp_path / "s.db")
    history = History(SystemMessage("sys"), store=store, session_id="s1")
    # the first fold is refused (it then waits), so the budget has to force the next one
    s = strategy("compact trigger=1.0", ["{bad", "{bad", *[SUMMARY] * 8])
    agent = Agent(ScriptedModel([*script, "done"]), s, env, history=history, budget=1200)
    result = agent.run("Read every file.")
    assert result.stop == "answered"
    assert result.forced_compactions >= 1 and isinstance(s, Compacting)
    assert s.forced_compactions >= 1
    summary = result.meter.summary()
    assert summary["fold_calls"] >= 1 and summary["fold_cost_usd"] > 0
    assert summary["total_cost_usd"] == pytest.approx(
        summary["cost_usd"] + summary["fold_cost_usd"]
    )
    last = render_checked(s, history, 1200)
    store.close()
    reopened = History.open(SQLiteStore(tmp_path / "s.db"), "s1")
    assert reopened.folds == history.folds
    again = strategy("compact trigger=1.0", [])  # no replies: calling the model would fail
    assert render_checked(again, reopened, 1200).messages == last.messages


class _Echo:
    """A reply function that checks what the folder was asked (the task stays out of it)."""

    def __init__(self) -> None:
        self.inputs: list[str] = []

    def __call__(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]]) -> str:
        self.inputs.append(messages[-1].content or "")
        return SUMMARY


def test_long_inputs_are_folded_in_rolling_chunks() -> None:
    history = session(30, output="a fairly long line of tool output here\n" * 60)
    echo = _Echo()
    s = strategy("resum", echo)
    s.folder.context_tokens = 2000  # type: ignore[attr-defined]
    assert isinstance(s, Folding)
    (record,) = s.fold(history, 100)
    assert record.accepted and len(record.calls) == len(echo.inputs) > 2
    assert "Summary so far: (none yet)" in echo.inputs[0]
    assert "read a.py: x = 1" in echo.inputs[1]  # each chunk gets the summary so far
    assert all(len(text) < 2000 * 4 for text in echo.inputs)
