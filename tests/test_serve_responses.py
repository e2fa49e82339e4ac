"""The proxy's OpenAI Responses API, driven by the official ``openai`` SDK, in front of a
scripted Responses upstream (a real HTTP server that checks bodies and sealed reasoning as the
API does, with OpenAI's automatic prompt cache) and of a Chat Completions one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from contextfold.core.store import open_store
from contextfold.testing.upstreams.chat import ScriptedServer
from contextfold.testing.upstreams.responses import (
    ScriptedResponses,
    function_call,
    message,
    reasoning,
)
from tests._protocols import CLIENT_KEY, TOKEN, openai_client, proxy_for, sessions

WEATHER = {
    "type": "function",
    "name": "weather",
    "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
PATCH = {"type": "custom", "name": "apply_patch", "description": "Apply a patch."}


def test_responses_create_is_answered_through_the_view(tmp_path: Path) -> None:
    with (
        ScriptedResponses(["Hello there."]) as up,
        proxy_for(up, "responses", tmp_path / "s.db") as proxy,
    ):
        reply = openai_client(proxy).responses.create(
            model="gpt-test", instructions="Be terse.", input="Say hello."
        )
    assert reply.output_text == "Hello there." and reply.status == "completed"
    assert reply.id.startswith("resp_") and reply.usage is not None
    sent = up.requests[0]
    assert sent.headers["authorization"] == f"Bearer {CLIENT_KEY}"
    assert TOKEN not in json.dumps(sent.headers)
    assert sent.body["instructions"] == "Be terse."
    assert sent.body["input"] == [
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "Say hello."}],
        }
    ]
    assert [t["name"] for t in sent.body["tools"]] == ["restore"]
    assert len(sessions(tmp_path / "s.db")) == 1


def _collect(stream: Any) -> tuple[list[str], Any]:
    kinds, final = [], None
    for event in stream:
        kinds.append(event.type)
        if event.type == "response.completed":
            final = event.response
    return kinds, final


def test_a_streamed_function_call_round_trip_keeps_one_session(tmp_path: Path) -> None:
    script = [
        [
            reasoning("Look it up."),
            message("Checking."),
            function_call("weather", {"city": "Oslo"}),
        ],
        "It is sunny.",
    ]
    with ScriptedResponses(script) as up, proxy_for(up, "responses", tmp_path / "s.db") as proxy:
        client = openai_client(proxy)
        inputs: list[Any] = [{"role": "user", "content": "Weather in Oslo?"}]
        include = ["reasoning.encrypted_content"]
        stream = client.responses.create(
            model="gpt-test",
            input=inputs,
            tools=[WEATHER],
            stream=True,
            store=False,
            include=include,
        )
        kinds, first = _collect(stream)
        assert kinds[:2] == ["response.created", "response.in_progress"]
        assert "response.output_text.delta" in kinds and kinds[-1] == "response.completed"
        assert "response.function_call_arguments.delta" in kinds
        types = [i.type for i in first.output]
        assert types == ["reasoning", "message", "function_call"]
        call = first.output[-1]
        assert call.name == "weather" and json.loads(call.arguments) == {"city": "Oslo"}
        inputs += [i.model_dump(exclude_none=True) for i in first.output]
        inputs.append({"type": "function_call_output", "call_id": call.call_id, "output": "sunny"})
        kinds, second = _collect(
            client.responses.create(
                model="gpt-test",
                input=inputs,
                tools=[WEATHER],
                stream=True,
                store=False,
                include=include,
            )
        )
    assert second.output_text == "It is sunny."
    sent = up.calls[1]["input"]
    assert sent[1]["type"] == "reasoning" and sent[1]["encrypted_content"]  # sealed, verbatim
    assert sent[-1] == {"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}
    (steps,) = sessions(tmp_path / "s.db").values()
    assert len(steps) == 2


def test_previous_response_id_continues_the_session_with_only_the_new_input(tmp_path: Path) -> None:
    script = [[function_call("weather", {"city": "Oslo"})], "Sunny in Oslo."]
    with ScriptedResponses(script) as up, proxy_for(up, "responses", tmp_path / "s.db") as proxy:
        client = openai_client(proxy)
        first = client.responses.create(model="gpt-test", input="Weather in Oslo?", tools=[WEATHER])
        call = first.output[-1]
        second = client.responses.create(
            model="gpt-test",
            previous_response_id=first.id,
            input=[{"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}],
            tools=[WEATHER],
        )
        assert client.responses.retrieve(second.id).output_text == "Sunny in Oslo."
        with pytest.raises(openai.NotFoundError) as info:
            client.responses.create(model="gpt-test", previous_response_id="resp_nope", input="x")
        client.responses.delete(first.id)
        with pytest.raises(openai.NotFoundError):
            client.responses.retrieve(first.id)
    assert second.output_text == "Sunny in Oslo." and second.previous_response_id == first.id
    assert info.value.body["code"] == "previous_response_not_found"  # type: ignore[index]
    sent = up.calls[1]
    assert "previous_response_id" not in sent  # the proxy sends the whole view, stateless
    assert [i["type"] for i in sent["input"]] == [
        "message",
        "function_call",
        "function_call_output",
    ]
    assert len(sessions(tmp_path / "s.db")) == 1


def test_store_false_keeps_nothing_to_continue_from() -> None:
    with ScriptedResponses(["ok"]) as up, proxy_for(up, "responses") as proxy:
        client = openai_client(proxy)
        first = client.responses.create(model="gpt-test", input="hi", store=False)
        with pytest.raises(openai.NotFoundError):
            client.responses.create(model="gpt-test", previous_response_id=first.id, input="again")


def test_the_strategys_restore_is_answered_by_the_proxy_and_never_shown() -> None:
    script = [[function_call("restore", {"step": 0})], "You asked about Oslo."]
    with ScriptedResponses(script) as up, proxy_for(up, "responses") as proxy:
        reply = openai_client(proxy).responses.create(model="gpt-test", input="Oslo, you said?")
    assert reply.output_text == "You asked about Oslo."
    assert "restore" not in json.dumps(reply.model_dump())
    answered = up.calls[1]["input"][-1]
    assert answered["type"] == "function_call_output" and "Oslo, you said?" in answered["output"]


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({"model": "m"}, "input"),
        ({"model": "m", "input": 3}, "input"),
        (
            {"model": "m", "input": [{"type": "function_call_output", "output": "x"}]},
            "input[0].call_id",
        ),
        ({"model": "m", "input": [{"role": "robot", "content": "x"}]}, "input[0].role"),
        ({"model": "m", "input": "x", "tools": [{"type": "function"}]}, "tools[0]"),
        ({"model": "m", "input": "x", "instructions": 3}, "instructions"),
    ],
)
def test_bad_requests_get_openai_errors_naming_the_field(body: dict[str, Any], where: str) -> None:
    with ScriptedResponses() as up, proxy_for(up, "responses") as proxy:
        answer = httpx.post(
            f"{proxy.url}/responses", json=body, headers={"authorization": f"Bearer {TOKEN}"}
        )
    assert answer.status_code == 400
    assert answer.json()["error"]["param"] == where
    assert up.requests == []


def test_remote_compaction_is_refused_in_a_shape_codex_reads() -> None:
    with ScriptedResponses() as up, proxy_for(up, "responses") as proxy:
        answer = httpx.post(
            f"{proxy.url}/responses/compact",
            json={"model": "m", "input": []},
            headers={"authorization": f"Bearer {TOKEN}"},
            timeout=10,
        )
    assert answer.status_code == 404 and "manages the context" in answer.json()["error"]["message"]


def _chat_reply(body: dict[str, Any]) -> dict[str, Any]:
    last = body["messages"][-1]
    if last["role"] == "tool":
        return {"role": "assistant", "content": f"Patched: {last['content']}"}
    patch = json.dumps({"input": "*** Begin Patch\n*** End Patch\n"})
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "apply_patch", "arguments": patch},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


@pytest.mark.parametrize("stream", [False, True])
def test_responses_are_translated_for_a_chat_completions_upstream(stream: bool) -> None:
    """Codex's shape: a developer message first (without instructions, the system prompt), a
    custom tool (free-form input), a server tool the Chat Completions upstream is not given."""
    tools = [PATCH, WEATHER, {"type": "web_search"}]
    first_input: list[Any] = [
        {
            "type": "message",
            "role": "developer",
            "content": [{"type": "input_text", "text": "Be careful."}],
        },
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "Patch it."}],
        },
    ]
    with ScriptedServer(_chat_reply) as up, proxy_for(up, "chat") as proxy:
        client = openai_client(proxy)
        options: dict[str, Any] = {
            "model": "m",
            "tools": tools,
            "store": False,
            "max_output_tokens": 50,
        }
        if stream:
            _, first = _collect(client.responses.create(input=first_input, stream=True, **options))
        else:
            first = client.responses.create(input=first_input, **options)
        call = first.output[-1]
        assert call.type == "custom_tool_call" and call.input == "*** Begin Patch\n*** End Patch\n"
        second_input = [
            *first_input,
            call.model_dump(exclude_none=True),
            {"type": "custom_tool_call_output", "call_id": call.call_id, "output": "Done!"},
        ]
        second = client.responses.create(input=second_input, **options)
    assert second.output_text == "Patched: Done!"
    sent = up.requests[-1][1]
    assert sent["messages"][0] == {"role": "system", "content": "Be careful."}
    assert json.loads(sent["messages"][2]["tool_calls"][0]["function"]["arguments"]) == {
        "input": "*** Begin Patch\n*** End Patch\n"
    }
    assert {t["function"]["name"] for t in sent["tools"]} == {"apply_patch", "weather", "restore"}
    assert sent["max_tokens"] == 50


def test_a_leading_system_item_is_the_system_prompt_and_goes_back_in_its_place(
    tmp_path: Path,
) -> None:
    """LangChain's shape on the Responses API: no instructions, the system prompt as the first
    input item. It is the session's system prompt (the task is its first step, as a strategy
    expects), and the upstream gets it as it came, where it came, without instructions; with
    instructions given, the same item stays a message of the conversation."""
    system = {"role": "system", "content": "Be terse."}
    question = {"role": "user", "content": "Say hello."}
    with (
        ScriptedResponses(["Hello.", "Hi."]) as up,
        proxy_for(up, "responses", tmp_path / "s.db") as proxy,
    ):
        client = openai_client(proxy)
        client.responses.create(model="m", input=[system, question])  # type: ignore[list-item]
        client.responses.create(
            model="m",
            instructions="Answer in French.",
            input=[system, question],  # type: ignore[list-item]
        )
    plain, instructed = (r.body for r in up.requests)
    assert "instructions" not in plain and plain["input"][0] == system
    assert [i["role"] for i in plain["input"]] == ["system", "user"]
    assert instructed["instructions"] == "Answer in French."
    assert [i["role"] for i in instructed["input"]] == ["system", "user"]
    with open_store(tmp_path / "s.db") as store:
        records = [store.load_session(sid) for sid in store.list_sessions()]
    firsts = {
        (r.system.content if r.system else None, r.steps[0].messages[0].content) for r in records
    }
    assert firsts == {("Be terse.", "Say hello."), ("Answer in French.", "Be terse.")}
