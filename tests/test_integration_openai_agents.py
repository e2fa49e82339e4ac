"""The OpenAI Agents SDK adapter on the SDK itself: an ``Agent`` on the SDK's
``OpenAIChatCompletionsModel`` against a scripted OpenAI-compatible server over HTTP, with
the filter as ``RunConfig.call_model_input_filter``. The model is sent the view; the run's
items stay whole; ``restore`` is a ``FunctionTool`` the session answers; the next turn
continues the same session."""

from __future__ import annotations

from typing import Any

import pytest
from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner, function_tool
from agents.run_config import ModelInputData
from openai import AsyncOpenAI

from contextfold.core.errors import ConfigError, HistoryError
from contextfold.integrations.openai_agents import (
    ContextFoldFilter,
    to_chat_messages,
    to_input_items,
)
from contextfold.session import Prepared, Session
from contextfold.testing.upstreams.chat import ScriptedServer
from tests._frameworks import (
    BUDGET,
    SYSTEM,
    TASK,
    agent_reply,
    assert_the_view_was_sent,
    assert_whole,
    bash_output,
    final_answer,
    sent,
    shape,
)


@function_tool
def bash(command: str) -> str:
    """Run a shell command."""
    return bash_output(command)


def _agent(server: ScriptedServer, fold: ContextFoldFilter) -> Agent[Any]:
    client = AsyncOpenAI(base_url=server.url, api_key="sk-test", max_retries=0)
    model = OpenAIChatCompletionsModel(model="scripted", openai_client=client)
    return Agent(name="shell", instructions=SYSTEM, model=model, tools=[bash, *fold.tools])


def _config(fold: ContextFoldFilter) -> RunConfig:
    return RunConfig(call_model_input_filter=fold, tracing_disabled=True)


def test_the_model_is_sent_the_view_and_the_run_keeps_its_items_whole() -> None:
    seen: list[Prepared] = []
    fold = ContextFoldFilter("refold", budget=BUDGET, on_prepare=seen.append)
    assert [t.name for t in fold.tools] == ["restore"]
    with ScriptedServer(agent_reply) as server:
        result = Runner.run_sync(_agent(server, fold), TASK, run_config=_config(fold))
    assert result.final_output == final_answer()
    assert_the_view_was_sent(sent(server.requests), seen[-1])
    items = result.to_input_list()
    assert_whole([str(item.get("output", "")) for item in items])
    assert seen[-1].messages[0] == {"role": "system", "content": SYSTEM}  # the instructions


def test_the_next_turn_continues_the_session_and_another_conversation_is_refused() -> None:
    fold = ContextFoldFilter("refold", budget=BUDGET)
    with ScriptedServer(agent_reply) as server:
        agent = _agent(server, fold)
        first = Runner.run_sync(agent, TASK, run_config=_config(fold))
        turn = [*first.to_input_list(), {"role": "user", "content": "And the second?"}]
        Runner.run_sync(agent, turn, run_config=_config(fold))
        history = fold.session.history
        assert history is not None
        last = history[len(history) - 1].messages[0]
        assert (last.role, last.content) == ("user", "And the second?")
        with pytest.raises(HistoryError, match=r"messages\[1\]: differs.*a filter of its own"):
            Runner.run_sync(agent, "Another conversation", run_config=_config(fold))


def test_the_tools_answer_through_the_runs_filter() -> None:
    """An agent made once serves conversations with filters of their own: ``restore`` is
    answered by the filter of the run that calls it."""
    maker = ContextFoldFilter("refold", budget=BUDGET)
    with ScriptedServer(agent_reply) as server:
        agent = _agent(server, maker)
        own = ContextFoldFilter("refold", budget=BUDGET)
        result = Runner.run_sync(agent, TASK, run_config=_config(own))
    assert result.final_output == final_answer()
    assert maker.session.history is None  # never used
    assert own.session.history is not None


def test_the_conversion_round_trips_text_calls_and_results() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": "looking",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                {"id": "b", "type": "function", "function": {"name": "g", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "A"},
        {"role": "tool", "tool_call_id": "b", "content": "B"},
        {"role": "assistant", "content": "done"},
    ]
    instructions, items = to_input_items(messages)
    back = to_chat_messages(ModelInputData(input=items, instructions=instructions))
    assert shape(back) == shape(messages)
    assert [c["id"] for c in back[2]["tool_calls"]] == ["a", "b"]


def test_a_session_can_be_given_whole_but_not_with_options_beside_it() -> None:
    session = Session("window keep=2", budget=BUDGET)
    assert ContextFoldFilter(session).session is session
    with pytest.raises(ConfigError, match="give the options to the Session"):
        ContextFoldFilter(session, budget=10)
