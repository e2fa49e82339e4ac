from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contextfold.core.errors import MessageFormatError
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    UserMessage,
    common_prefix,
    from_openai,
    to_openai,
)
from tests.gen import messages


@given(messages())
def test_round_trip_is_lossless(message: Message) -> None:
    data = to_openai(message)
    assert from_openai(data) == message
    # the dict form survives JSON and re-serializes identically
    assert to_openai(from_openai(json.loads(json.dumps(data)))) == data


def test_openai_shape_of_a_tool_call() -> None:
    msg = AssistantMessage(None, tool_calls=(ToolCall("c1", "get", '{"a": 1}'),), reasoning="r")
    assert to_openai(msg) == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get", "arguments": '{"a": 1}'}}
        ],
        "reasoning_content": "r",
    }


def test_accepts_openrouter_reasoning_and_dict_arguments() -> None:
    msg = from_openai(
        {
            "role": "assistant",
            "content": "x",
            "reasoning": "why",
            "tool_calls": [{"id": "a", "name": "f", "arguments": {"k": 1}}],
        }
    )
    assert msg == AssistantMessage(
        "x", tool_calls=(ToolCall("a", "f", '{"k": 1}'),), reasoning="why"
    )


def test_text_parts_are_joined() -> None:
    data = {
        "role": "user",
        "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
    }
    assert from_openai(data) == UserMessage("ab")


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ({"role": "robot", "content": "x"}, "unknown message role 'robot'"),
        ({"role": "tool", "content": "x"}, "tool_call_id"),
        ({"role": "user", "content": 3}, "must be a string"),
        ({"role": "user", "content": [{"type": "image_url"}]}, "non-text content part"),
        ({"role": "assistant", "tool_calls": [{"id": "a", "function": {}}]}, "no function name"),
        ({"role": "assistant", "tool_calls": [{"function": {"name": "f"}}]}, "no string 'id'"),
        ("not a dict", "must be a JSON object"),
    ],
)
def test_malformed_messages_name_the_problem(data: object, needle: str) -> None:
    with pytest.raises(MessageFormatError, match=needle):
        from_openai(data)  # type: ignore[arg-type]


def test_malformed_arguments_are_reported_when_parsed() -> None:
    call = ToolCall("c", "f", "{not json")
    with pytest.raises(MessageFormatError, match="malformed JSON arguments"):
        call.parsed_arguments()


@given(st.lists(st.integers(0, 3), max_size=30), st.lists(st.integers(0, 3), max_size=30))
def test_common_prefix_matches_a_plain_walk(a: list[int], b: list[int]) -> None:
    msgs_a = [UserMessage(str(i)) for i in a]
    msgs_b = [UserMessage(str(i)) for i in b]
    walk = 0
    while walk < min(len(a), len(b)) and a[walk] == b[walk]:
        walk += 1
    assert common_prefix(msgs_a, msgs_b) == walk
