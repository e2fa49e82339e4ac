"""Session: OpenAI messages in, the view out; only new steps appended, rewrites refused with
their position, the strategy's own tools answered, stores written through and resumed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openai.types.chat import ChatCompletionMessage

from contextfold import (
    ConfigError,
    ContextFoldError,
    History,
    HistoryError,
    MessageFormatError,
    Session,
    SQLiteStore,
    StoreConflictError,
)
from contextfold.core.experience import Experience
from contextfold.core.messages import AssistantMessage
from contextfold.core.pipeline import render_checked
from contextfold.strategies.registry import build_strategy

BASH = {
    "type": "function",
    "function": {
        "name": "bash",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
    },
}


def call(i: int, content: str | None = None) -> dict[str, Any]:
    command = json.dumps({"command": f"cat src/mod{i}.py"})
    return {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "bash", "arguments": command}}
        ],
    }


def result(i: int, lines: int = 40) -> dict[str, Any]:
    body = "\n".join(f"def f{i}_{k}(x): return x + {k}  # mod{i}" for k in range(lines))
    return {"role": "tool", "tool_call_id": f"c{i}", "content": body}


def conversation(steps: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You fix bugs."},
        {"role": "user", "content": "Fix the failing test."},
    ]
    for i in range(steps):
        messages += [call(i), result(i)]
    return messages


def test_each_call_appends_only_what_is_new_and_returns_the_view() -> None:
    session = Session("refold")
    for n in range(8):
        prepared = session.prepare(conversation(n), [BASH])
        assert session.history is not None and len(session.history) == 1 + n
        assert prepared.full_tokens == sum(s.total_tokens for s in session.history.steps) + (
            session.history.system_tokens
        )
        assert prepared.tokens == prepared.view.total_tokens <= prepared.full_tokens
    assert [t["function"]["name"] for t in prepared.tools] == ["bash", "restore"]
    assert prepared.messages[0] == {"role": "system", "content": "You fix bugs."}
    assert all(isinstance(m, dict) and "role" in m for m in prepared.messages)
    assert prepared.tokens < prepared.full_tokens and prepared.view.elisions  # refold folded
    fresh = render_checked(build_strategy("refold"), session.history)
    assert prepared.view.messages == fresh.messages  # the same view a fresh render gives


def test_openai_sdk_objects_and_empty_or_none_content_are_the_same_turn() -> None:
    session = Session("full")
    messages: list[Any] = conversation(1)
    sdk = ChatCompletionMessage.model_validate({**call(1), "content": None})
    session.prepare([*messages, sdk, result(1)])
    again = session.prepare([*messages, {**call(1), "content": ""}, result(1)])  # "" not None
    assert session.history is not None and len(session.history) == 3
    assert len(again.messages) == 6


def test_an_empty_assistant_reply_is_a_turn() -> None:
    session = Session("full")
    empty = ChatCompletionMessage.model_validate({"role": "assistant", "content": ""})
    session.prepare([*conversation(1), empty, {"role": "user", "content": "go on"}])
    assert session.history is not None and session.history[2].message == AssistantMessage("")


def test_a_rewritten_earlier_message_names_the_first_position_that_differs() -> None:
    session = Session("full")
    messages = conversation(3)
    session.prepare(messages)
    edited = json.loads(json.dumps(messages))
    edited[5]["content"] = "something else"
    with pytest.raises(HistoryError, match=r"^messages\[5\]: differs .*its step 2\); a Session"):
        session.prepare(edited)
    messages[3]["content"] = "changed in place"  # the caller's own list, mutated
    with pytest.raises(HistoryError, match=r"^messages\[3\]: differs"):
        session.prepare(messages)
    with pytest.raises(HistoryError, match=r"^messages\[0\]: the system message differs"):
        session.prepare([{"role": "system", "content": "Other."}, *conversation(3)[1:]])
    with pytest.raises(HistoryError, match="fewer than the 4 this session already holds"):
        session.prepare(conversation(2))
    assert session.history is not None and len(session.history) == 4  # nothing was changed
    session.prepare([*conversation(3), {"role": "user", "content": "next"}])  # still usable


def test_malformed_input_names_its_position() -> None:
    session = Session("full")
    bad = conversation(2)
    bad[4]["tool_calls"][0]["function"]["arguments"] = 7
    with pytest.raises(MessageFormatError, match=r"^messages\[4\]\.tool_calls\[0\]\.function"):
        session.prepare(bad)
    with pytest.raises(MessageFormatError, match=r"^messages\[2\]: tool calls \['c0'\] get no"):
        session.prepare([*conversation(1)[:3], {"role": "user", "content": "?"}])
    with pytest.raises(ContextFoldError, match="whole conversation"):
        session.prepare({"role": "user", "content": "hi"})  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"tools\[0\]\.function\.name"):
        session.prepare(conversation(1), [{"type": "function", "function": {}}])
    own = {"type": "function", "function": {"name": "restore"}}
    with pytest.raises(ConfigError, match=r"tools\[1\]: the tool 'restore' has the name"):
        Session("refold").prepare(conversation(1), [BASH, own])


def test_call_tool_answers_the_strategys_tools_and_none_for_the_rest() -> None:
    session = Session("refold")
    session.prepare(conversation(3))
    assert session.call_tool("restore", '{"step": 2}') == result(1)["content"]
    assert session.call_tool("restore", {"step": 2}) == result(1)["content"]
    assert session.call_tool("bash", '{"command": "ls"}') is None
    assert (session.call_tool("restore", "{nope") or "").startswith("error: the arguments")
    assert Session("full").call_tool("restore", "{}") is None  # full offers no tools


@pytest.mark.parametrize(
    "arguments",
    [{"step": "\u00b2"}, {"step": "9" * 5000}, {"step": 1, "lines": "1-" + "9" * 5000}],
    ids=["superscript", "5000 digits", "5000-digit line"],
)
def test_hostile_restore_arguments_are_an_error_text(arguments: dict[str, Any]) -> None:
    session = Session("refold")
    session.prepare(conversation(2))
    answer = session.call_tool("restore", arguments)
    assert answer is not None and answer.startswith("error:")


def test_own_tools_are_the_strategys_before_any_call_and_a_copy() -> None:
    session = Session("recall")
    tools = session.own_tools
    assert [t["function"]["name"] for t in tools] == ["recall"]
    tools[0]["function"]["name"] = "changed"
    assert session.own_tools[0]["function"]["name"] == "recall"
    assert Session("full").own_tools == []


def test_a_store_keeps_the_session_and_open_resumes_it(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as store:
        first = Session("refold", budget=5000, store=store, session_id="run-1")
        for n in range(4):
            first.prepare(conversation(n))
        with pytest.raises(StoreConflictError, match=r"Session\.open\(store, 'run-1'\) resumes"):
            Session("refold", store=store, session_id="run-1")
        resumed = Session.open(store, "run-1")
        assert resumed.budget == 5000 and resumed.strategy.name == "refold"
        later = resumed.prepare(conversation(9))
        assert len(store.load_session("run-1").steps) == 10
        assert len(store.load_calls("run-1")) == 5  # every prepared view, as sent
    whole = Session("refold", budget=5000)
    for n in [*range(4), 9]:
        expected = whole.prepare(conversation(n))
    assert later.messages == expected.messages  # resuming changes nothing


def test_a_stored_session_with_no_step_yet_resumes(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as store:
        History("You fix bugs.", store=store, session_id="empty")
        session = Session.open(store, "empty", strategy="full")
        assert session.prepare(conversation(1)).full_tokens > 0
        assert len(store.load_session("empty").steps) == 2


def test_end_tells_a_learning_strategy_the_session_is_over() -> None:
    experience = Experience()
    session = Session("refold", experience=experience)
    for n in range(3):
        session.prepare(conversation(n))
    session.end()
    session.end()  # once
    assert experience.lengths == [3]
    with pytest.raises(ContextFoldError, match="has ended"):
        session.prepare(conversation(3))
    with pytest.raises(ConfigError, match="'full' does not learn across sessions"):
        Session("full", experience=Experience())


def test_strategy_specs_and_folders_come_from_the_registry() -> None:
    with pytest.raises(ConfigError, match="did you mean 'refold'"):
        Session("refodl")
    with pytest.raises(ConfigError, match="folds with a model but has no folder"):
        Session("summary")
    assert Session("summary", folder="scripted").strategy.name == "summary"
    with pytest.raises(ConfigError, match="budget must be at least 1"):
        Session("full", budget=0)
