"""The agent loop with the scripted model: tools, malformed calls, users, budgets, stores."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from contextfold.agent import Agent
from contextfold.core.errors import ContextBudgetError
from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage, Message, SystemMessage, ToolMessage
from contextfold.core.store import SQLiteStore
from contextfold.envs import FilesEnv
from contextfold.models import ScriptedModel, tool_call
from contextfold.strategies.full import FullStrategy

FILES = {"a.py": "x = 1\n"}


def agent(replies: list[Any], **kw: Any) -> Agent:
    history = kw.pop("history", None)
    if history is None:  # (an empty History is falsy: it has a length)
        history = History(SystemMessage("sys"))
    model = ScriptedModel(replies)
    return Agent(model, kw.pop("strategy", FullStrategy()), FilesEnv(FILES), history=history, **kw)


def results(a: Agent) -> list[str]:
    return [m.content for s in a.history for m in s.messages if isinstance(m, ToolMessage)]


def test_tool_results_join_the_calling_step_and_the_answer_ends_the_run() -> None:
    a = agent([tool_call("read_file", {"path": "a.py"}), "x is 1"])
    result = a.run("What is x?")
    assert result.stop == "answered"
    assert [s.kind for s in a.history] == ["user", "assistant", "assistant"]
    assert results(a) == ["   1  x = 1"]
    assert result.tool_calls == 1 and result.tool_errors == 0
    assert len(result.meter.calls) == 2


def test_malformed_calls_become_errors_the_agent_sees_and_are_counted() -> None:
    replies = [
        tool_call("read_file", "{not json"),
        tool_call("delete_everything", {}),
        tool_call("read_file", "[1, 2]"),
        "gave up",
    ]
    a = agent(replies)
    result = a.run("go")
    texts = results(a)
    assert texts[0].startswith("error: the arguments of read_file are not valid JSON")
    assert texts[1].startswith("error: there is no tool 'delete_everything'; the tools are: ")
    assert texts[2] == "error: the arguments of read_file must be a JSON object"
    assert result.tool_errors == 3 and result.stop == "answered"


class Raising(FilesEnv):
    def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        raise RuntimeError("disk on fire")


def test_a_tool_that_raises_does_not_crash_the_run() -> None:
    history = History(SystemMessage("sys"))
    model = ScriptedModel([tool_call("list_files"), "ok"])
    result = Agent(model, FullStrategy(), Raising({}), history=history).run("go")
    [step] = [s for s in history if s.results]
    assert step.results[0].content == "error: list_files failed: RuntimeError: disk on fire"
    assert result.tool_errors == 1


class Echo:
    def __init__(self, replies: list[str | None]) -> None:
        self.replies = replies
        self.seen: list[int] = []

    def respond(self, messages: Sequence[Message]) -> str | None:
        self.seen.append(len(messages))
        return self.replies.pop(0)


def test_user_simulator_takes_turns_until_it_stops() -> None:
    user = Echo(["and y?", None])
    a = agent(["x is 1", "y is unknown"], user=user)
    result = a.run("What is x?")
    assert result.stop == "user_stop"
    assert [s.kind for s in a.history] == ["user", "assistant", "user", "assistant"]
    assert user.seen == [3, 5]  # system, task, answer; then two more


def test_step_cap() -> None:
    a = agent([tool_call("list_files")] * 3, max_steps=3)
    assert a.run("go").stop == "max_steps"


def test_over_budget_with_no_compaction_is_a_clear_error_and_nothing_is_lost(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    history = History(SystemMessage("sys"), store=store, session_id="s1")
    a = agent([tool_call("read_file", {"path": "a.py"})] * 5, history=history, budget=40)
    with pytest.raises(ContextBudgetError, match=r"strategy 'full' rendered .* over the budget"):
        a.run("read a.py again and again")
    assert a.result.forced_compactions == 1
    reopened = History.open(store, "s1")
    assert [s.messages for s in reopened] == [s.messages for s in history]
    assert len(reopened) >= 2


def test_every_call_is_stored_with_its_prompt_and_usage(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    history = History(SystemMessage("sys"), store=store, session_id="s1")
    a = agent([tool_call("list_files"), "done"], history=history)
    a.run("go")
    calls = store.load_calls("s1")
    assert [c["step"] for c in calls] == [1, 2]
    assert calls[1]["messages"][-1] == history[1].results[0]
    assert calls[0]["usage"]["prompt_tokens"] > 0


def test_strategy_tools_are_offered_and_routed() -> None:
    from contextfold.strategies.refold import RefoldStrategy

    strategy = RefoldStrategy()
    model = ScriptedModel([tool_call("restore", {"step": 0}), "ok"])
    history = History(SystemMessage("sys"))
    Agent(model, strategy, FilesEnv({}), history=history).run("the task")
    assert [t["function"]["name"] for t in model.calls[0].tools][-1] == "restore"
    assert history[1].results[0].content == "the task"
    assert isinstance(history[2].message, AssistantMessage)
