"""The scripted Anthropic upstream against the official ``anthropic`` SDK: what it emits parses
as the SDK's own types, in Anthropic's event order; it refuses what the real API refuses, in
its error shape; its prompt cache reads and writes only at ``cache_control`` breakpoints."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx
import pytest

from contextfold.core.meter import PRICE_TABLES
from contextfold.testing.upstreams._anthropic_checks import SYSTEM_MESSAGES_BETA
from contextfold.testing.upstreams.anthropic import ScriptedAnthropic, text, thinking, tool_use

WEATHER: Any = {"name": "weather", "input_schema": {"type": "object"}}
SYSTEM = "You are a careful coding agent. " * 40  # 320 tokens at 4 characters a token
CACHED = {"type": "ephemeral"}


def _client(up: ScriptedAnthropic, key: str = "sk-test") -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=up.url, api_key=key, max_retries=0)


def _system(mark: bool = True) -> list[dict[str, Any]]:
    block: dict[str, Any] = {"type": "text", "text": SYSTEM}
    return [{**block, "cache_control": CACHED}] if mark else [block]


def test_streamed_and_plain_replies_are_the_same_message_in_anthropics_event_order() -> None:
    reply = [
        thinking("Small file."),
        text("Writing it."),
        tool_use("Write", {"p": 1}, id="toolu_1"),
    ]
    with ScriptedAnthropic([reply, reply]) as up:
        client = _client(up)
        ask: dict[str, Any] = {"model": "claude-t", "max_tokens": 64}
        ask["messages"] = [{"role": "user", "content": "write p"}]
        plain = client.messages.create(**ask)
        with client.messages.stream(**ask) as stream:
            events = list(stream)
            streamed = stream.get_final_message()
    assert [b.model_dump() for b in streamed.content] == [b.model_dump() for b in plain.content]
    assert streamed.stop_reason == plain.stop_reason == "tool_use"
    assert streamed.usage.output_tokens == plain.usage.output_tokens
    raw = [e.type for e in events if e.type in _RAW]
    assert raw[:2] == ["message_start", "content_block_start"]
    assert raw[-2:] == ["message_delta", "message_stop"]
    assert raw.count("content_block_start") == raw.count("content_block_stop") == 3


_RAW = {
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
}


def test_raw_stream_has_a_ping_after_message_start_and_deltas_of_each_block_kind() -> None:
    reply = [thinking("hm"), text("Done."), tool_use("Write", {"path": "a.py"})]
    body: dict[str, Any] = {"model": "claude-t", "max_tokens": 64}
    body["messages"] = [{"role": "user", "content": "go"}]
    with ScriptedAnthropic([reply, "pong"]) as up:
        events = list(_client(up).messages.create(**body, stream=True))
        raw = httpx.post(
            f"{up.url}/v1/messages", json={**body, "stream": True}, headers=_headers("k")
        ).text
    deltas = {e.delta.type for e in events if e.type == "content_block_delta"}
    assert deltas == {"thinking_delta", "signature_delta", "text_delta", "input_json_delta"}
    names = [line[7:] for line in raw.splitlines() if line.startswith("event: ")]
    assert names[:3] == ["message_start", "ping", "content_block_start"]
    assert names[-3:] == ["content_block_stop", "message_delta", "message_stop"]


def test_a_tool_use_round_trip_passes_the_signed_thinking_back() -> None:
    replies = [[thinking("Need the weather."), tool_use("weather", {"city": "Oslo"})], "Sunny."]
    with ScriptedAnthropic(replies) as up:
        client = _client(up)
        messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Oslo?"}]
        ask: dict[str, Any] = {"model": "claude-t", "max_tokens": 64, "tools": [WEATHER]}
        first = client.messages.create(**ask, messages=messages)
        call = first.content[1]
        assert call.type == "tool_use"
        messages += [
            {
                "role": "assistant",
                "content": [b.model_dump(exclude_none=True) for b in first.content],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "sun"}],
            },
        ]
        second = client.messages.create(**ask, messages=messages)
        assert second.content[0].type == "text" and second.content[0].text == "Sunny."
        with pytest.raises(anthropic.BadRequestError, match="must define tools"):
            client.messages.create(model="claude-t", max_tokens=64, messages=messages)
        messages[1]["content"][0]["thinking"] = "Need the weather!"  # edited: refused
        with pytest.raises(anthropic.BadRequestError, match=r"messages\.1\.content\.0.*signature"):
            client.messages.create(**ask, messages=messages)
    assert up.calls[1]["messages"][2]["content"][0]["tool_use_id"] == call.id


def test_a_tool_use_without_its_result_and_a_stray_result_are_refused() -> None:
    use = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
    stray = {"type": "tool_result", "tool_use_id": "toolu_9", "content": "x"}
    with ScriptedAnthropic() as up:
        client = _client(up)
        ask = {"model": "m", "max_tokens": 8, "tools": [WEATHER]}
        with pytest.raises(anthropic.BadRequestError, match="without `tool_result`"):
            client.messages.create(
                **ask,
                messages=[
                    {"role": "user", "content": "a"},
                    {"role": "assistant", "content": [use]},
                    {"role": "user", "content": "b"},
                ],
            )
        with pytest.raises(anthropic.BadRequestError, match=r"unexpected `tool_use_id`.*toolu_9"):
            client.messages.create(**ask, messages=[{"role": "user", "content": [stray]}])
        with pytest.raises(anthropic.BadRequestError, match="non-empty"):
            client.messages.create(**ask, messages=[{"role": "user", "content": [text("")]}])
    assert len(up.calls) == 3  # each was received, and none was answered
    assert up.bills == []


def test_errors_are_in_anthropics_shape_and_headers_are_checked_like_the_real_api() -> None:
    body = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "x"}]}
    with ScriptedAnthropic(api_key="sk-right") as up:
        with pytest.raises(anthropic.AuthenticationError):
            _client(up, "sk-wrong").messages.create(**body)
        post = f"{up.url}/v1/messages"
        no_key = httpx.post(post, json=body, headers={"anthropic-version": "2023-06-01"})
        no_version = httpx.post(post, json=body, headers={"x-api-key": "sk-right"})
        missing = httpx.post(post, json={"model": "m"}, headers=_headers("sk-right"))
        route = httpx.post(f"{up.url}/v1/complete", json=body, headers=_headers("sk-right"))
        bad = httpx.post(post, content=b"{", headers=_headers("sk-right"))
        bearer = httpx.post(
            post,
            json=body,
            headers={"authorization": "Bearer sk-right", "anthropic-version": "2023-06-01"},
        )
    assert (no_key.status_code, no_key.json()["error"]["type"]) == (401, "authentication_error")
    assert no_version.json()["error"]["message"] == "anthropic-version: header is required"
    assert missing.json()["error"]["message"] == "max_tokens: Field required"
    assert (route.status_code, route.json()["error"]["type"]) == (404, "not_found_error")
    assert bad.status_code == 400 and bad.json()["type"] == "error"
    assert bearer.status_code == 200
    assert no_key.json()["request_id"] == no_key.headers["request-id"]


def _headers(key: str) -> dict[str, str]:
    return {"x-api-key": key, "anthropic-version": "2023-06-01"}


def test_an_injected_failure_and_a_broken_stream_reach_the_sdk_as_errors() -> None:
    with ScriptedAnthropic() as up:
        client = _client(up)
        ask: dict[str, Any] = {"model": "m", "max_tokens": 8}
        ask["messages"] = [{"role": "user", "content": "hello there"}]
        up.fail = (529, "Overloaded")
        with pytest.raises(anthropic.APIStatusError) as failed:
            client.messages.create(**ask)
        assert failed.value.status_code == 529
        up.fail, up.stream_error = None, "overloaded_error"
        with pytest.raises(anthropic.APIStatusError, match="Overloaded"):
            list(client.messages.create(**ask, stream=True))


def test_count_tokens_counts_the_same_input_a_call_is_billed_for() -> None:
    with ScriptedAnthropic(min_cache_tokens=64) as up:
        client = _client(up)
        ask: dict[str, Any] = {"model": "m", "system": _system()}
        ask["messages"] = [{"role": "user", "content": "hello"}]
        counted = client.messages.count_tokens(**ask).input_tokens
        usage = client.messages.create(**ask, max_tokens=8).usage
    billed = usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens
    assert counted == billed > 320


def _usage(client: anthropic.Anthropic, messages: list[dict[str, Any]], **kw: Any) -> Any:
    ask = {"model": "m", "max_tokens": 8, "system": _system(), **kw}
    return client.messages.create(**ask, messages=messages).usage


def test_the_cache_is_written_at_a_breakpoint_and_read_only_up_to_one() -> None:
    with ScriptedAnthropic(min_cache_tokens=64) as up:
        client = _client(up)
        first = _usage(client, [{"role": "user", "content": "question one"}])
        second = _usage(client, [{"role": "user", "content": "question two, longer"}])
        unmarked = _usage(client, [{"role": "user", "content": "q"}], system=_system(False))
    assert first.cache_read_input_tokens == 0
    assert first.cache_creation_input_tokens > 320 and first.input_tokens > 0
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.cache_creation_input_tokens == 0
    assert unmarked.cache_read_input_tokens == unmarked.cache_creation_input_tokens == 0


def test_a_later_breakpoint_reads_the_earlier_one_within_twenty_blocks_and_writes_the_rest() -> (
    None
):
    turn = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "step " * 30, "cache_control": CACHED}],
        }
    ]
    grown = [
        {"role": "user", "content": [text("step " * 30)]},
        {"role": "assistant", "content": [text("ok " * 30)]},
        {
            "role": "user",
            "content": [{"type": "text", "text": "more " * 30, "cache_control": CACHED}],
        },
    ]
    with ScriptedAnthropic(min_cache_tokens=64) as up:
        client = _client(up)
        first = _usage(client, turn)
        second = _usage(client, grown)
    read = first.cache_read_input_tokens + first.cache_creation_input_tokens
    assert second.cache_read_input_tokens == read
    assert second.cache_creation_input_tokens > 0 and second.input_tokens == 0


def test_a_prefix_below_the_minimum_is_not_cached_and_five_breakpoints_are_refused() -> None:
    many = [{"type": "text", "text": f"part {i}", "cache_control": CACHED} for i in range(5)]
    with ScriptedAnthropic(min_cache_tokens=10_000) as up:
        client = _client(up)
        usage = _usage(client, [{"role": "user", "content": "q"}])
        again = _usage(client, [{"role": "user", "content": "q"}])
        with pytest.raises(anthropic.BadRequestError, match="maximum of 4 blocks"):
            client.messages.create(
                model="m", max_tokens=8, messages=[{"role": "user", "content": many}]
            )
    assert usage.cache_creation_input_tokens == again.cache_read_input_tokens == 0


def test_requests_are_recorded_with_headers_and_the_script_runs_out_loudly() -> None:
    with ScriptedAnthropic(["only"]) as up:
        client = _client(up)
        ask: dict[str, Any] = {"model": "m", "max_tokens": 8}
        ask["messages"] = [{"role": "user", "content": "x"}]
        client.messages.create(**ask, extra_headers={"anthropic-beta": "b1"})
        with pytest.raises(anthropic.InternalServerError, match="no reply left"):
            client.messages.create(**ask)
    first = up.requests[0]
    assert (first.method, first.path, first.headers["anthropic-beta"]) == (
        "POST",
        "/v1/messages",
        "b1",
    )
    # this SDK sends its key as a bearer token; Claude Code sends x-api-key
    key = first.headers.get("x-api-key") or first.headers["authorization"].removeprefix("Bearer ")
    assert key == "sk-test" and "anthropic-version" in first.headers


def test_system_role_messages_pass_only_under_claude_codes_per_turn_beta() -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "system", "content": [text("# Environment")]},
    ]
    with ScriptedAnthropic() as up:
        client = _client(up)
        with pytest.raises(anthropic.BadRequestError, match="'assistant' or 'user'"):
            client.messages.create(model="m", max_tokens=8, messages=messages)
        beta = {"anthropic-beta": f"claude-code-20250219,{SYSTEM_MESSAGES_BETA}"}
        reply = client.messages.create(
            model="m", max_tokens=8, messages=messages, extra_headers=beta
        )
    assert reply.content[0].type == "text"


def test_a_reply_function_that_raises_is_a_500_in_anthropics_shape() -> None:
    def broken(body: dict[str, Any]) -> str:
        raise KeyError("tools")

    ask: dict[str, Any] = {"model": "m", "max_tokens": 8}
    with ScriptedAnthropic(broken) as up, pytest.raises(anthropic.InternalServerError, match="Key"):
        _client(up).messages.create(**ask, messages=[{"role": "user", "content": "x"}])


def test_each_call_is_billed_at_anthropics_cache_prices() -> None:
    with ScriptedAnthropic(min_cache_tokens=64) as up:
        client = _client(up)
        usages = [_usage(client, [{"role": "user", "content": "same question"}]) for _ in range(2)]
    prices = PRICE_TABLES["default"]  # reads 0.1x, writes 1.25x the input price
    for bill, usage in zip(up.bills, usages, strict=True):
        assert (bill.cached.read, bill.cached.written, bill.cached.uncached, bill.output) == (
            usage.cache_read_input_tokens,
            usage.cache_creation_input_tokens,
            usage.input_tokens,
            usage.output_tokens,
        )
    first, second = up.bills
    assert second.cached.read == first.cached.written > 0
    saved = first.cost(prices) - second.cost(prices)
    assert saved == pytest.approx(first.cached.written * (6.25 - 0.5) / 1e6)
