"""The scripted Responses upstream against the official ``openai`` SDK: what it emits parses as
the SDK's own types, in OpenAI's event order; it is stateful as OpenAI is
(``previous_response_id``, ``store``); it refuses what the real API refuses, in its error
shape; its automatic prefix cache reports ``cached_tokens`` in whole steps past a minimum."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

from contextfold.testing.upstreams.responses import (
    ScriptedResponses,
    custom_tool_call,
    function_call,
    message,
    reasoning,
)

TOOLS: list[Any] = [
    {"type": "function", "name": "weather", "parameters": {"type": "object", "properties": {}}}
]
LONG = "Answer in one word. " * 60  # 300 tokens at 4 characters a token


def _client(up: ScriptedResponses, key: str = "sk-test") -> openai.OpenAI:
    return openai.OpenAI(base_url=up.url, api_key=key, max_retries=0)


def test_streamed_and_plain_replies_are_the_same_response_in_openais_event_order() -> None:
    reply = [
        reasoning("Look it up."),
        message("Checking."),
        function_call("weather", {"c": "Oslo"}),
    ]
    with ScriptedResponses([reply, reply]) as up:
        client = _client(up)
        plain = client.responses.create(model="m", input="Weather?", tools=TOOLS)
        events = list(
            client.responses.create(model="m", input="Weather?", tools=TOOLS, stream=True)
        )
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    for kind in (
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.reasoning_summary_text.delta",
        "response.output_item.done",
    ):
        assert kind in kinds
    streamed = events[-1].response  # type: ignore[union-attr]
    strip = {"id", "call_id"}
    assert [o.model_dump(exclude=strip) for o in streamed.output] == [
        o.model_dump(exclude=strip) for o in plain.output
    ]
    assert plain.output_text == "Checking."


def test_a_function_call_round_trip_continues_from_previous_response_id() -> None:
    with ScriptedResponses([[function_call("weather", {"city": "Oslo"})], "Sunny."]) as up:
        client = _client(up)
        first = client.responses.create(model="m", input="Weather in Oslo?", tools=TOOLS)
        call = first.output[0]
        assert call.type == "function_call"
        output = {"type": "function_call_output", "call_id": call.call_id, "output": "sun"}
        second = client.responses.create(
            model="m", previous_response_id=first.id, input=[output], tools=TOOLS
        )
        stored = client.responses.retrieve(second.id)
    assert second.output_text == "Sunny." and stored.output_text == "Sunny."
    assert second.previous_response_id == first.id
    assert up.calls[1]["input"] == [output]  # the client sent only what was new


def test_the_whole_input_resent_statelessly_hits_the_cache_like_a_continued_response() -> None:
    with ScriptedResponses(
        ["one", "two", "three"], min_cache_tokens=128, cache_step_tokens=16
    ) as up:
        client = _client(up)
        first = client.responses.create(model="m", instructions=LONG, input="Q1", store=False)
        items = [
            {"role": "user", "content": "Q1"},
            *[o.model_dump(exclude_none=True) for o in first.output],
            {"role": "user", "content": "Q2"},
        ]
        second = client.responses.create(model="m", instructions=LONG, input=items, store=False)
        changed = client.responses.create(model="m", instructions="Other.", input=items)
    assert first.usage is not None and second.usage is not None and changed.usage is not None
    assert first.usage.input_tokens_details.cached_tokens == 0
    seen = first.usage.input_tokens  # the whole first prompt, in whole steps past the minimum
    assert second.usage.input_tokens_details.cached_tokens == 128 + (seen - 128) // 16 * 16
    assert changed.usage.input_tokens_details.cached_tokens == 0  # instructions come first


def test_a_prompt_below_the_minimum_is_never_cached() -> None:
    with ScriptedResponses() as up:  # OpenAI's 1,024-token minimum
        client = _client(up)
        for _ in range(2):
            usage = client.responses.create(model="m", instructions=LONG, input="Q").usage
            assert usage is not None and usage.input_tokens_details.cached_tokens == 0


def test_an_unknown_or_unstored_previous_response_is_a_404_in_openais_shape() -> None:
    with ScriptedResponses() as up:
        client = _client(up)
        unstored = client.responses.create(model="m", input="x", store=False)
        for rid in ("resp_nope", unstored.id):
            with pytest.raises(openai.NotFoundError) as missing:
                client.responses.create(model="m", input="y", previous_response_id=rid)
            error = missing.value.body
            assert error == {
                "message": f"Previous response with id '{rid}' not found.",
                "type": "invalid_request_error",
                "param": "previous_response_id",
                "code": "previous_response_not_found",
            }


def test_calls_without_outputs_stray_outputs_and_wrong_parts_are_refused() -> None:
    call = function_call("weather", "{}", call_id="call_1")
    custom = custom_tool_call("apply_patch", "*** Begin Patch", call_id="call_2")
    with ScriptedResponses() as up:
        client = _client(up)
        cases: list[tuple[list[Any], str]] = [
            ([{"role": "user", "content": "a"}, call], "No tool output found for function call"),
            ([{"role": "user", "content": "a"}, custom], "for custom tool call call_2"),
            (
                [{"type": "function_call_output", "call_id": "call_9", "output": "x"}],
                "No tool call found for function call output with call_id call_9",
            ),
            (
                [{"role": "assistant", "content": [{"type": "input_text", "text": "x"}]}],
                "'output_text' and 'refusal'",
            ),
            (
                [{"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "x"}],
                "could not be verified",
            ),
        ]
        for items, problem in cases:
            with pytest.raises(openai.BadRequestError, match=problem):
                client.responses.create(model="m", input=items)


def test_encrypted_reasoning_comes_back_only_when_included_and_verifies_when_resent() -> None:
    replies = [[reasoning("Plan."), message("a")], [reasoning("Plan."), message("b")], "c"]
    with ScriptedResponses(replies) as up:
        client = _client(up)
        bare = client.responses.create(model="m", input="x")
        sealed = client.responses.create(
            model="m", input="x", include=["reasoning.encrypted_content"], store=False
        )
        items = [o.model_dump(exclude_none=True) for o in sealed.output]
        again = client.responses.create(model="m", input=[{"role": "user", "content": "x"}, *items])
    assert bare.output[0].encrypted_content is None  # type: ignore[union-attr]
    assert sealed.output[0].encrypted_content  # type: ignore[union-attr]
    assert again.output_text == "c"


def test_auth_routes_and_injected_failures_answer_in_openais_shape() -> None:
    with ScriptedResponses(api_key="sk-right") as up:
        with pytest.raises(openai.AuthenticationError):
            _client(up, "sk-wrong").responses.create(model="m", input="x")
        none = httpx.post(f"{up.url}/responses", json={"model": "m", "input": "x"})
        headers = {"authorization": "Bearer sk-right"}
        compact = httpx.post(f"{up.url}/responses/compact", json={}, headers=headers)
        no_model = httpx.post(f"{up.url}/responses", json={"input": "x"}, headers=headers)
        up.fail = (503, "Upstream down")
        with pytest.raises(openai.InternalServerError, match="Upstream down"):
            _client(up, "sk-right").responses.create(model="m", input="x")
        up.fail, up.stream_error = None, "server_error"
        stream = _client(up, "sk-right").responses.create(model="m", input="x", stream=True)
        broken = list(stream)
    assert none.status_code == 401 and set(none.json()["error"]) == {
        "message",
        "type",
        "param",
        "code",
    }
    assert compact.status_code == 404 and "error" in compact.json()
    assert no_model.json()["error"]["param"] == "model"
    last = broken[-1]
    assert last.type == "error" and last.code == "server_error"  # the SDK's ResponseErrorEvent
    assert "response.completed" not in [e.type for e in broken]


def test_stored_responses_can_be_retrieved_and_deleted() -> None:
    with ScriptedResponses(["kept"]) as up:
        client = _client(up)
        made = client.responses.create(model="m", input="x")
        assert client.responses.retrieve(made.id).output_text == "kept"
        client.responses.delete(made.id)
        with pytest.raises(openai.NotFoundError):
            client.responses.retrieve(made.id)
    assert [(r.method, r.path) for r in up.requests][-2:] == [
        ("DELETE", f"/v1/responses/{made.id}"),
        ("GET", f"/v1/responses/{made.id}"),
    ]
