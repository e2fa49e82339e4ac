"""The one grouper: messages to steps, strict or lenient, every error naming its position."""

from __future__ import annotations

from typing import Any

import pytest
from openai.types.chat import ChatCompletionMessage

from contextfold.core.errors import MessageFormatError
from contextfold.core.grouping import as_message, group_steps, parse_messages
from contextfold.core.history import History
from contextfold.core.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
    to_openai,
)
from contextfold.core.pipeline import render_checked
from contextfold.strategies.full import FullStrategy


def call(cid: str, name: str = "f", args: Any = "{}") -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def conversation() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call("a"), call("b")]},
        {"role": "tool", "tool_call_id": "b", "content": "B"},
        {"role": "tool", "tool_call_id": "a", "content": "A"},
        {"role": "assistant", "content": "done"},
    ]


def test_steps_system_and_labels() -> None:
    grouped = group_steps(parse_messages(conversation()))
    assert grouped.system == SystemMessage("sys")
    assert [len(s) for s in grouped.steps] == [1, 3, 1]
    assert grouped.labels == (
        ("messages[1]",),
        ("messages[2]", "messages[3]", "messages[4]"),
        ("messages[5]",),
    )


@pytest.mark.parametrize(
    ("index", "bad", "at"),
    [
        (2, {"role": "assistant", "tool_calls": [call("a", args=5)]}, "messages[2].tool_calls[0]"),
        (2, {"role": "assistant", "tool_calls": [{"id": "a", "function": {}}]}, "messages[2]"),
        (1, {"role": "robot", "content": "x"}, "messages[1].role"),
        (1, {"role": "user", "content": [{"type": "image_url"}]}, "messages[1].content[0]"),
        (3, {"role": "tool", "content": "B"}, "messages[3].tool_call_id"),
    ],
)
def test_a_bad_message_names_its_position_and_field(index: int, bad: Any, at: str) -> None:
    messages = conversation()
    messages[index] = bad
    with pytest.raises(MessageFormatError) as info:
        parse_messages(messages)
    assert info.value.at.startswith(at) and str(info.value).startswith(info.value.at + ": ")


def test_arguments_that_are_not_text_or_an_object_name_the_field() -> None:
    messages = conversation()
    messages[2] = {"role": "assistant", "tool_calls": [call("a", args=[1])]}
    with pytest.raises(MessageFormatError, match=r"^messages\[2\]\.tool_calls\[0\]\.function"):
        parse_messages(messages)


@pytest.mark.parametrize(
    ("edit", "at", "needle"),
    [
        (lambda m: m.pop(4), "messages[2]", "get no result"),  # 'a' never answered
        (lambda m: m.insert(3, {"role": "user", "content": "?"}), "messages[2]", "before"),
        (lambda m: m.insert(1, {"role": "tool", "tool_call_id": "a", "content": "x"}), "", ""),
        (lambda m: m.insert(2, {"role": "system", "content": "again"}), "messages[2]", "system"),
        (
            lambda m: m.__setitem__(2, {"role": "assistant", "tool_calls": [call("a"), call("a")]}),
            "messages[2].tool_calls[1].id",
            "repeats",
        ),
    ],
)
def test_strict_grouping_refuses_with_the_position(edit: Any, at: str, needle: str) -> None:
    messages = conversation()
    edit(messages)
    with pytest.raises(MessageFormatError) as info:
        group_steps(parse_messages(messages))
    assert info.value.at.startswith(at or "messages[1]") and needle in str(info.value)


def test_strict_refuses_trailing_unanswered_calls_lenient_drops_and_counts_them() -> None:
    messages = conversation()[:4]  # 'a' still unanswered at the end
    with pytest.raises(MessageFormatError, match=r"messages\[2\]: tool calls \['a'\]"):
        group_steps(parse_messages(messages))
    grouped = group_steps(parse_messages(messages), lenient=True)
    assert grouped.dropped_calls == 1
    assert grouped.steps[-1][0] == AssistantMessage(None, tool_calls=(ToolCall("b", "f"),))


def test_openai_sdk_objects_and_contextfold_messages_are_accepted() -> None:
    sdk = ChatCompletionMessage.model_validate(
        {"role": "assistant", "content": None, "tool_calls": [call("a", "f", '{"x": 1}')]}
    )
    assert as_message(sdk) == AssistantMessage(None, tool_calls=(ToolCall("a", "f", '{"x": 1}'),))
    assert as_message(UserMessage("u")) == UserMessage("u")
    with pytest.raises(MessageFormatError, match="got str"):
        as_message("hello")


def test_tool_call_arguments_given_as_a_dict_are_json_from_the_start() -> None:
    tc = ToolCall("c1", "f", {"a": 1})
    assert tc.arguments == '{"a": 1}' and tc.parsed_arguments() == {"a": 1}
    history = History(SystemMessage("s"))
    history.append(UserMessage("go"))
    history.append(AssistantMessage(None, tool_calls=(tc,)), ToolMessage("ok", "c1"))
    view = render_checked(FullStrategy(), history)
    assert to_openai(view.messages[2])["tool_calls"][0]["function"]["arguments"] == '{"a": 1}'
    with pytest.raises(MessageFormatError, match=r"function\.arguments"):
        ToolCall("c1", "f", 5)  # type: ignore[arg-type]
    with pytest.raises(MessageFormatError, match="function name"):
        ToolCall("c1", "", "{}")
