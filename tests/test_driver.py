"""The loop step (core/driver.py) that Session, the agent loop, the proxy's sessions and replay
are built on: a strategy's tool answered the same way by each, errors as text, the budget
enforced live and a hint in replay, replay's views prepared as a live loop prepares them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from contextfold.agent import Agent
from contextfold.bench.replay import replay_one
from contextfold.core.counters import resolve_counter
from contextfold.core.driver import MAX_TOOL_ARGUMENTS, Driver, ToolAnswer
from contextfold.core.errors import ContextBudgetError
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
from contextfold.core.parts import Part
from contextfold.core.store import MemoryStore
from contextfold.core.view import View
from contextfold.envs import FilesEnv
from contextfold.importers.base import Trajectory
from contextfold.models import ScriptedModel, tool_call
from contextfold.serve.sessions.conversation import parse_conversation
from contextfold.serve.sessions.sessions import SessionManager
from contextfold.serve.sessions.turns import answer_tool
from contextfold.session import Session
from contextfold.strategies.full import FullStrategy
from contextfold.strategies.refold import RefoldStrategy
from contextfold.strategies.registry import build_strategy

COUNTER = resolve_counter("approx")
OPENING: list[dict[str, Any]] = [
    {"role": "system", "content": "You help."},
    {"role": "user", "content": "the code is 4417"},
    {"role": "assistant", "content": "noted"},
    {"role": "user", "content": "what did step 0 say?"},
]
ARGUMENTS = {
    "a step": '{"step": 0}',
    "no step": '{"step": 9}',
    "not JSON": "{nope",
    "NaN": '{"step": NaN}',
    "not an object": "[0]",
    "nested too deeply": "[" * 50_000,
    "too long": '{"step": 0, "pad": "' + "x" * MAX_TOOL_ARGUMENTS + '"}',
}


def _by_session(arguments: str) -> str | None:
    session = Session("refold", counter=COUNTER)
    session.prepare(OPENING)
    return session.call_tool("restore", arguments)


def _by_agent(arguments: str) -> str:
    history = History(SystemMessage("You help."), counter=COUNTER)
    history.append(UserMessage("the code is 4417"))
    history.append(AssistantMessage("noted"))
    model = ScriptedModel([tool_call("restore", arguments), "done"])
    Agent(model, RefoldStrategy(), FilesEnv({}), history=history).run("what did step 0 say?")
    return history[3].results[0].content


def _by_proxy(arguments: str) -> str:
    manager = SessionManager(MemoryStore(), RefoldStrategy, COUNTER)
    turn = manager.begin(parse_conversation(OPENING, ""), "")
    return answer_tool(turn, "restore", arguments)


@pytest.mark.parametrize("arguments", ARGUMENTS.values(), ids=ARGUMENTS.keys())
def test_session_the_agent_and_the_proxy_answer_a_strategy_tool_alike(arguments: str) -> None:
    answers = {_by_session(arguments), _by_agent(arguments), _by_proxy(arguments)}
    assert len(answers) == 1, answers
    (answer,) = answers
    assert answer is not None
    if arguments == ARGUMENTS["a step"]:
        assert answer == "the code is 4417"
    else:
        assert answer.startswith("error: ")


class _Fragile(FullStrategy):
    """Offers a tool and breaks its contract on it (raises instead of answering)."""

    def tools(self) -> list[dict[str, Any]]:
        return [{"type": "function", "function": {"name": "peek", "parameters": {}}}]

    def call_tool(self, name: str, arguments: Mapping[str, Any], history: History) -> str:
        raise KeyError(name)


def test_a_strategy_failing_on_its_tool_gives_an_error_text_not_a_raise() -> None:
    expected = "error: peek could not use these arguments (KeyError)"
    assert Session(_Fragile()).call_tool("peek", "{}") == expected
    history = History(counter=COUNTER)
    model = ScriptedModel([tool_call("peek"), "done"])
    result = Agent(model, _Fragile(), FilesEnv({}), history=history).run("go")
    assert history[1].results[0].content == expected
    assert result.tool_errors == 1 and result.stop == "answered"


def test_call_tool_answers_only_the_strategys_tools_and_says_when_it_failed() -> None:
    history = History(counter=COUNTER)
    history.append(UserMessage("the code is 4417"))
    driver = Driver(RefoldStrategy(), history)
    assert driver.offers("restore") and not driver.offers("bash")
    assert driver.call_tool("bash", "{}") is None
    assert driver.answer("bash", "{}") == "error: the strategy offers no tool 'bash'"
    assert driver.call_tool("restore", {"step": 0}) == ToolAnswer("the code is 4417")
    refused = driver.call_tool("restore", '{"step": 5}')  # the strategy's own refusal
    assert refused is not None and not refused.error and refused.text.startswith("error:")
    bad = driver.call_tool("restore", "[0]")
    assert bad == ToolAnswer("error: the arguments of restore must be a JSON object", True)
    tools = driver.own_tools
    tools[0]["function"]["name"] = "changed"
    assert driver.own_tools[0]["function"]["name"] == "restore"  # a copy


def _long_history() -> History:
    history = History(counter=COUNTER)
    history.append(UserMessage("read it"))
    history.append(
        AssistantMessage(None, tool_calls=(ToolCall("c0", "cat"),)),
        ToolMessage("line\n" * 400, "c0"),
    )
    return history


def test_the_budget_is_enforced_live_and_only_a_hint_in_replay() -> None:
    with pytest.raises(ContextBudgetError):
        Driver(FullStrategy(), _long_history(), budget=100).prepare()
    hinted = Driver(FullStrategy(), _long_history(), budget=100, fit=False).prepare()
    assert hinted.view.total_tokens > 100 and hinted.compactions == 0


IMAGE = Part.of("anthropic:layout", {"blocks": [{"type": "image"}]}, text="[image]", tokens=1600)


def test_replay_prepares_each_view_as_a_live_loop_does() -> None:
    """A tool result the strategy rewrites keeps its provider parts in replay as live (the
    view is prepared by prepare_view; replay rendered without it before)."""
    steps: list[tuple[Message, ...]] = [(UserMessage("look"),)]
    for i in range(3):
        call = AssistantMessage(None, tool_calls=(ToolCall(f"c{i}", "shot"),))
        steps.append((call, ToolMessage(f"pixels {i}\n" * 300, f"c{i}", parts=(IMAGE,))))
    steps.append((AssistantMessage("seen"),))
    traj = Trajectory("t", "test", None, tuple(steps))
    views: list[View] = []
    replay_one(
        traj,
        traj.counted_steps(COUNTER),
        build_strategy("clip max_chars=200"),
        Meter(),
        counter=COUNTER,
        check=lambda _, view: views.append(view),
    )
    last = views[-1]
    live = Driver(build_strategy("clip max_chars=200"), History(counter=COUNTER))
    for step in traj.counted_steps(COUNTER)[:-1]:
        live.append_step(step)
    assert last.messages == live.prepare().view.messages
    clipped = [m for m in last.messages if isinstance(m, ToolMessage)]
    assert clipped and all(m.parts == (IMAGE,) and len(m.content) < 300 for m in clipped)


def test_the_agent_meters_the_render_time_of_every_call() -> None:
    history = History(counter=COUNTER)
    model = ScriptedModel([tool_call("list_files"), "done"])
    result = Agent(model, FullStrategy(), FilesEnv({"a.py": "x"}), history=history).run("go")
    assert len(result.meter.calls) == 2
    assert all(call.render_ns > 0 for call in result.meter.calls)
