"""The PydanticAI adapter on PydanticAI itself: an ``Agent`` on ``OpenAIChatModel`` against a
scripted OpenAI-compatible server over HTTP, with the ``ContextFold`` capability. The model is
sent the view; the run's history stays whole; ``restore`` is a tool of the capability's
toolset, answered by the session; a run continuing ``message_history`` continues the
conversation's session, a new run starts another."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai import Agent, ImageUrl
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from contextfold.core.errors import MessageFormatError
from contextfold.integrations.pydantic_ai import (
    ContextFold,
    from_chat_messages,
    to_chat_messages,
)
from contextfold.session import Prepared
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


def bash(command: str) -> str:
    """Run a shell command."""
    return bash_output(command)


def _agent(server: ScriptedServer, capability: ContextFold) -> Agent[None, str]:
    model = OpenAIChatModel(
        "scripted", provider=OpenAIProvider(base_url=server.url, api_key="sk-test")
    )
    return Agent(model, system_prompt=SYSTEM, tools=[bash], capabilities=[capability])


def test_the_model_is_sent_the_view_and_the_run_keeps_its_history_whole() -> None:
    seen: list[tuple[str | None, Prepared]] = []
    capability = ContextFold(
        "refold", budget=BUDGET, on_prepare=lambda key, p: seen.append((key, p))
    )
    with ScriptedServer(agent_reply) as server:
        result = _agent(server, capability).run_sync(TASK)
    assert result.output == final_answer()
    assert_the_view_was_sent(sent(server.requests), seen[-1][1])
    texts = [str(getattr(p, "content", "")) for m in result.all_messages() for p in m.parts]
    assert_whole(texts)
    assert {key for key, _ in seen} == {result.all_messages()[0].conversation_id}
    tools = [t["function"]["name"] for t in server.requests[-1][1]["tools"]]
    assert sorted(tools) == ["bash", "restore"]


def test_a_run_continuing_the_history_continues_the_session_a_new_run_starts_another() -> None:
    keys: list[str | None] = []
    capability = ContextFold("refold", budget=BUDGET, on_prepare=lambda key, _: keys.append(key))
    with ScriptedServer(agent_reply) as server:
        agent = _agent(server, capability)
        first = agent.run_sync(TASK)
        agent.run_sync("And the second?", message_history=first.all_messages())
        agent.run_sync("Another conversation")
    continued, other = keys[-2], keys[-1]
    assert continued == keys[0] and other != keys[0]
    session = capability.conversations.session(continued)
    assert session.history is not None
    last = session.history[len(session.history) - 1].messages[0]
    assert (last.role, last.content) == ("user", "And the second?")


def test_the_instructions_travel_beside_the_view() -> None:
    capability = ContextFold("refold", budget=BUDGET)
    with ScriptedServer(agent_reply) as server:
        model = OpenAIChatModel(
            "scripted", provider=OpenAIProvider(base_url=server.url, api_key="sk-test")
        )
        Agent(model, instructions="Be brief.", tools=[bash], capabilities=[capability]).run_sync(
            TASK
        )
    assert all(
        body["messages"][0] == {"role": "system", "content": "Be brief."}
        for _, body in server.requests
    )


def test_the_conversion_round_trips_and_refuses_what_has_no_chat_form() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": "looking",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "A"},
        {"role": "assistant", "content": "done"},
    ]
    back = to_chat_messages(from_chat_messages(messages))
    assert shape(back) == shape(messages)
    image = ModelRequest(parts=[UserPromptPart(["look", ImageUrl("https://example.org/a.png")])])
    with pytest.raises(MessageFormatError, match=r"messages\[1\]\.parts\[0\]: .*ImageUrl"):
        to_chat_messages([ModelResponse(parts=[TextPart("x")]), image])
