"""What the framework adapters share: one session per conversation key, built alike, resumed
from the store or rebuilt from the conversation when memory drops it; and an adapter whose
framework is missing names the extra to install."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from contextfold.core.errors import ConfigError
from contextfold.core.store import MemoryStore
from contextfold.integrations.conversations import Conversations
from contextfold.strategies.registry import build_strategy
from tests._frameworks import BUDGET, SYSTEM, bash_output


def conversation(calls: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "task"},
    ]
    for k in range(calls):
        fn = {"name": "bash", "arguments": f'{{"command": "ls dir{k}"}}'}
        call = {"id": f"c{k}", "type": "function", "function": fn}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append(
            {"role": "tool", "tool_call_id": f"c{k}", "content": bash_output(f"ls dir{k}")}
        )
    return messages


def test_each_key_has_its_own_session_and_the_same_tools() -> None:
    conversations = Conversations("refold", budget=BUDGET)
    assert [t["function"]["name"] for t in conversations.tools] == ["restore"]
    a, b = conversations.session("a"), conversations.session("b")
    assert a is not b and conversations.session("a") is a
    assert conversations.session(None) is conversations.session(None)
    conversations.prepare("a", conversation(3))
    assert a.history is not None and b.history is None


def test_a_dropped_session_is_rebuilt_from_the_conversation_without_a_store() -> None:
    conversations = Conversations("refold", budget=BUDGET, limit=1)
    first = conversations.prepare("a", conversation(4))
    conversations.prepare("b", conversation(1))  # drops "a" from memory
    again = conversations.prepare("a", conversation(4))
    assert again.messages == first.messages and again.tokens == first.tokens


def test_a_dropped_session_is_resumed_from_the_store() -> None:
    store = MemoryStore()
    conversations = Conversations("refold", budget=BUDGET, store=store, limit=1)
    conversations.prepare("a", conversation(2))
    conversations.prepare("b", conversation(1))  # drops "a"
    later = Conversations("refold", budget=BUDGET, store=store)  # another process, say
    prepared = later.prepare("a", conversation(5))
    assert sorted(store.list_sessions()) == ["a", "b"]
    assert len(store.load_session("a").steps) == 1 + 5  # the task, then one step a call
    assert prepared.full_tokens > prepared.tokens


def test_the_restore_tool_is_answered_in_its_conversation() -> None:
    conversations = Conversations("refold", budget=BUDGET)
    conversations.prepare("a", conversation(2))
    assert "ls dir0" in conversations.call_tool("a", "restore", {"step": 1})
    assert "ls dir0" not in conversations.call_tool("b", "restore", {"step": 1})


def test_a_strategy_object_and_a_limit_under_one_are_refused() -> None:
    with pytest.raises(ConfigError, match="each conversation gets a strategy of its own"):
        Conversations(build_strategy("refold"))  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="limit must be at least 1"):
        Conversations("refold", limit=0)


@pytest.mark.parametrize(
    ("adapter", "framework", "extra"),
    [
        ("langchain", "langchain", "langchain"),
        ("openai_agents", "agents", "openai-agents"),
        ("pydantic_ai", "pydantic_ai", "pydantic-ai"),
    ],
)
def test_an_adapter_without_its_framework_names_the_extra(
    adapter: str, framework: str, extra: str
) -> None:
    code = (
        f"import sys\nsys.modules[{framework!r}] = None\n"
        f"import contextfold.integrations.{adapter}\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 1
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith(f"ImportError: contextfold.integrations.{adapter} needs ")
    assert "which is not installed" in last
    assert last.endswith(f"pip install 'contextfold[{extra}]'")


def test_importing_contextfold_loads_no_framework() -> None:
    code = "import contextfold, contextfold.integrations, sys\n"
    code += "print([m for m in ('langchain', 'agents', 'pydantic_ai') if m in sys.modules])"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.stdout.strip() == "[]", run.stderr
