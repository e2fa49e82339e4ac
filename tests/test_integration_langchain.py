"""The LangChain adapter on LangChain itself: a ``create_agent`` agent with ``ChatOpenAI``
against a scripted OpenAI-compatible server over HTTP. The model is sent the view; the
agent's state keeps every message whole; ``restore`` is a LangChain tool the session
answers; each thread is a conversation of its own."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from contextfold.core.errors import HistoryError
from contextfold.core.store import MemoryStore
from contextfold.integrations.langchain import ContextFoldMiddleware
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
)


@tool
def bash(command: str) -> str:
    """Run a shell command."""
    return bash_output(command)


def _agent(server: ScriptedServer, middleware: ContextFoldMiddleware, **options: Any) -> Any:
    model = ChatOpenAI(model="scripted", base_url=server.url, api_key="sk-test", max_retries=0)
    return create_agent(model, [bash], system_prompt=SYSTEM, middleware=[middleware], **options)


def _run(agent: Any, thread: str | None = None, task: str = TASK) -> dict[str, Any]:
    config = {"configurable": {"thread_id": thread}} if thread else None
    return agent.invoke({"messages": [{"role": "user", "content": task}]}, config=config)  # type: ignore[no-any-return]


def test_the_model_is_sent_the_view_and_the_agent_keeps_the_history_whole() -> None:
    seen: list[tuple[str | None, Prepared]] = []
    middleware = ContextFoldMiddleware(
        "refold", budget=BUDGET, on_prepare=lambda thread, p: seen.append((thread, p))
    )
    assert [t.name for t in middleware.tools] == ["restore"]
    with ScriptedServer(agent_reply) as server:
        state = _run(_agent(server, middleware), "thread-1")
    assert state["messages"][-1].content == final_answer()
    assert_the_view_was_sent(sent(server.requests), seen[-1][1])
    assert_whole([str(m.content) for m in state["messages"]])
    assert {thread for thread, _ in seen} == {"thread-1"}
    tools = [t["function"]["name"] for t in server.requests[-1][1]["tools"]]
    assert sorted(tools) == ["bash", "restore"]


def test_the_async_agent_takes_the_same_path() -> None:
    seen: list[tuple[str | None, Prepared]] = []
    middleware = ContextFoldMiddleware(
        "refold", budget=BUDGET, on_prepare=lambda thread, p: seen.append((thread, p))
    )
    with ScriptedServer(agent_reply) as server:
        agent = _agent(server, middleware)
        messages = {"messages": [{"role": "user", "content": TASK}]}
        config = {"configurable": {"thread_id": "a"}}
        state = asyncio.run(agent.ainvoke(messages, config=config))
    assert state["messages"][-1].content == final_answer()
    assert_the_view_was_sent(sent(server.requests), seen[-1][1])
    assert {thread for thread, _ in seen} == {"a"}  # the thread id reaches the worker thread


def test_each_thread_is_a_conversation_of_its_own_kept_under_its_id() -> None:
    store = MemoryStore()
    middleware = ContextFoldMiddleware("refold", budget=BUDGET, store=store)
    with ScriptedServer(agent_reply) as server:
        agent = _agent(server, middleware)
        _run(agent, "first")
        _run(agent, "second", task="Another task, another thread.")
    assert sorted(store.list_sessions()) == ["first", "second"]
    held = store.load_session("second")
    assert held.system is not None and held.system.content == SYSTEM


def test_a_second_conversation_without_a_thread_says_to_give_one() -> None:
    middleware = ContextFoldMiddleware("refold", budget=BUDGET)
    with ScriptedServer(agent_reply) as server:
        agent = _agent(server, middleware)
        _run(agent)
        with pytest.raises(HistoryError, match=r"messages\[1\]: differs.*thread_id"):
            _run(agent, task="Another task in the same (default) conversation.")


def test_a_thread_resumes_in_a_new_agent_from_the_store_beside_its_checkpointer() -> None:
    store, saver = MemoryStore(), InMemorySaver()
    seen: list[Prepared] = []
    with ScriptedServer(agent_reply) as server:
        first = ContextFoldMiddleware("refold", budget=BUDGET, store=store)
        _run(_agent(server, first, checkpointer=saver), "t")
        later = ContextFoldMiddleware(  # a new process: the session comes from the store
            "refold", budget=BUDGET, store=store, on_prepare=lambda _, p: seen.append(p)
        )
        state = _run(_agent(server, later, checkpointer=saver), "t", task="And the second?")
    assert state["messages"][-1].content == "noted: And the second?"
    steps = store.load_session("t").steps
    assert steps[-1].messages[0].content == "And the second?"
    assert len(steps) == 9  # the task, five calls, the restore, the answer, the next message
    assert seen[0].full_tokens > 3 * seen[0].tokens
