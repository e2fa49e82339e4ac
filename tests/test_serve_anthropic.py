"""The proxy's Anthropic Messages API, driven by the official ``anthropic`` SDK, in front of a
scripted Anthropic upstream (a real HTTP server that checks bodies and signatures as the API
does, with Anthropic's prompt cache) and of a Chat Completions one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import httpx
import pytest

from contextfold.testing.upstreams._cache import LOOKBACK_BLOCKS
from contextfold.testing.upstreams._prompt import anthropic_blocks
from contextfold.testing.upstreams.anthropic import ScriptedAnthropic, text, thinking, tool_use
from contextfold.testing.upstreams.chat import ScriptedServer
from tests._protocols import (
    CLIENT_KEY,
    TOKEN,
    anthropic_client,
    marked,
    proxy_for,
    root,
    sessions,
)

WEATHER = {
    "name": "weather",
    "description": "The weather in a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def _user(words: str) -> dict[str, Any]:
    return {"role": "user", "content": words}


def test_messages_create_is_answered_through_the_view_with_the_clients_headers(
    tmp_path: Path,
) -> None:
    with (
        ScriptedAnthropic(["Hello there."]) as up,
        proxy_for(up, "anthropic", tmp_path / "s.db") as proxy,
    ):
        reply = anthropic_client(proxy).messages.create(
            model="claude-test",
            max_tokens=64,
            system="You are terse.",
            messages=[_user("Say hello.")],
            extra_headers={"anthropic-beta": "context-management-2025-06-27"},
        )
    assert [b.type for b in reply.content] == ["text"] and reply.content[0].text == "Hello there."
    assert reply.stop_reason == "end_turn" and reply.usage.input_tokens >= 0
    sent = up.requests[0]
    assert sent.headers["authorization"] == f"Bearer {CLIENT_KEY}"  # the client's, not the token
    assert sent.headers["anthropic-beta"] == "context-management-2025-06-27"
    assert TOKEN not in json.dumps(sent.headers)
    assert sent.body["system"] == "You are terse." and sent.body["max_tokens"] == 64
    assert sent.body["messages"] == [  # a string is one text block (how the API reads it)
        {"role": "user", "content": [{"type": "text", "text": "Say hello."}]}
    ]
    assert [t["name"] for t in sent.body["tools"]] == ["restore"]  # the strategy's own tool
    assert len(sessions(tmp_path / "s.db")) == 1


def test_a_streamed_tool_use_round_trip_keeps_one_session(tmp_path: Path) -> None:
    script = [[text("Checking."), tool_use("weather", {"city": "Oslo"})], "It is sunny."]
    with ScriptedAnthropic(script) as up, proxy_for(up, "anthropic", tmp_path / "s.db") as proxy:
        client = anthropic_client(proxy)
        messages: list[Any] = [_user("Weather in Oslo?")]
        with client.messages.stream(
            model="claude-test", max_tokens=64, messages=messages, tools=[WEATHER]
        ) as stream:
            first = stream.get_final_message()
        call = first.content[-1]
        assert first.stop_reason == "tool_use" and call.type == "tool_use"
        assert call.name == "weather" and call.input == {"city": "Oslo"}
        assert first.content[0].type == "text" and first.content[0].text == "Checking."
        messages += [
            {"role": "assistant", "content": [b.model_dump() for b in first.content]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "sunny"}],
            },
        ]
        with client.messages.stream(
            model="claude-test", max_tokens=64, messages=messages, tools=[WEATHER]
        ) as stream:
            second = stream.get_final_message()
    assert second.content[0].text == "It is sunny." and second.stop_reason == "end_turn"
    assert up.calls[1]["messages"][1]["content"][1]["id"] == call.id
    (steps,) = sessions(tmp_path / "s.db").values()
    assert len(steps) == 2  # the question; the call with its result (the answer comes back next)


def test_thinking_blocks_and_images_travel_verbatim(tmp_path: Path) -> None:
    pixel = (  # a 1x1 PNG
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5E"
        "rkJggg=="
    )
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": pixel},
    }
    script = [[thinking("The user wants Oslo."), tool_use("weather", {"city": "Oslo"})], "Sunny."]
    with ScriptedAnthropic(script) as up, proxy_for(up, "anthropic") as proxy:
        client = anthropic_client(proxy)
        question = {"role": "user", "content": [{"type": "text", "text": "Weather here?"}, image]}
        first = client.messages.create(
            model="claude-test", max_tokens=64, messages=[question], tools=[WEATHER]
        )
        assert [b.type for b in first.content] == ["thinking", "tool_use"]
        turn = {
            "role": "assistant",
            "content": [b.model_dump(exclude_none=True) for b in first.content],
        }
        result = {
            "type": "tool_result",
            "tool_use_id": first.content[1].id,
            "content": [{"type": "text", "text": "sunny"}, image],
        }
        second = client.messages.create(
            model="claude-test",
            max_tokens=64,
            messages=[question, turn, {"role": "user", "content": [result]}],
            tools=[WEATHER],
        )
    assert second.content[0].text == "Sunny."  # the upstream checked the thinking signature
    sent = up.calls[1]["messages"]
    assert sent[0] == question and sent[1]["content"][0] == turn["content"][0]
    assert sent[2]["content"] == [{**result, "tool_use_id": first.content[1].id}]


def test_the_strategys_restore_is_answered_by_the_proxy_and_never_shown(tmp_path: Path) -> None:
    script = [[tool_use("restore", {"step": 0})], "Here it is again."]
    with ScriptedAnthropic(script) as up, proxy_for(up, "anthropic") as proxy:
        reply = anthropic_client(proxy).messages.create(
            model="claude-test", max_tokens=64, messages=[_user("What did I say?")]
        )
    assert [b.type for b in reply.content] == ["text"] and reply.stop_reason == "end_turn"
    assert "restore" not in json.dumps(reply.model_dump())
    answered = up.calls[1]["messages"][-1]["content"][0]
    assert answered["type"] == "tool_result" and "What did I say?" in json.dumps(answered)


def _steps(n: int, size: int) -> list[dict[str, Any]]:
    """A coding session: a task, then ``n`` calls of ``read`` with long, distinct outputs."""
    messages: list[dict[str, Any]] = [_user("Fix the bug in the parser. Read the files first.")]
    for i in range(n):
        call = {
            "type": "tool_use",
            "id": f"toolu_{i}",
            "name": "read",
            "input": {"path": f"f{i}.py"},
        }
        messages.append(
            {"role": "assistant", "content": [{"type": "text", "text": f"Reading f{i}."}, call]}
        )
        body = "\n".join(f"line {k} of file {i}: {'x' * 40}" for k in range(size))
        result = {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": body}
        messages.append({"role": "user", "content": [result]})
    return messages


def _claude_code_marks(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Claude Code's breakpoint on the newest message's last block."""
    out = json.loads(json.dumps(messages))
    last = out[-1]
    if isinstance(last["content"], str):
        last["content"] = [{"type": "text", "text": last["content"]}]
    last["content"][-1]["cache_control"] = {"type": "ephemeral"}
    return out


def test_a_view_that_changes_only_at_advances_reads_its_prefix_from_the_cache() -> None:
    """Claude Code's breakpoints (the system prompt, the newest block) are kept on refold's
    view and the proxy marks where its settled prefix ends: every call reads from the cache
    all that the call before it marked and it still shows (between advances, everything but
    the newest turn); at an advance, what the proxy's own mark kept, beyond the system prompt
    the client's marks alone would keep."""
    system = [{"type": "text", "text": "You fix bugs in Python. " * 220, "cache_control": _MARK}]
    tools = [{"name": "read", "description": "Read a file.", "input_schema": {"type": "object"}}]
    spec = "refold advance=fixed every=3"
    with (
        ScriptedAnthropic(lambda body: "ok") as up,
        proxy_for(up, "anthropic", strategy=spec) as proxy,
    ):
        client = anthropic_client(proxy)
        for n in range(1, 21):
            messages = _claude_code_marks(_steps(n, 30))
            client.messages.create(
                model="claude-test", max_tokens=16, system=system, messages=messages, tools=tools
            )
        strategy = next(iter(proxy.proxy.manager.sessions.values())).strategy
    assert strategy.advances >= 3  # type: ignore[attr-defined]
    bodies, bills = up.calls, up.bills
    assert all(len(marked(b)) <= 4 for b in bodies)
    assert all("system.0" in marked(b) for b in bodies)  # the client's own marks, kept
    assert all(marked(b)[-1].startswith(f"messages.{len(b['messages']) - 1}.") for b in bodies)
    beyond_client = 0
    for k in range(1, len(bodies)):
        owed, own = _readable(bodies[k - 1], bodies[k])
        assert bills[k].cached.read >= owed > 0
        beyond_client += own
    assert beyond_client >= 2  # advances that read the settled prefix through the proxy's mark


def test_an_advance_past_the_lookback_reads_what_the_previous_settled_part_cached() -> None:
    """An advance that moves refold's boundary on by more than the 20 blocks Anthropic looks
    back still reads the prefix the previous view's settled part cached: the proxy marks that
    block too. Each call reads at least the longest prefix, through any block the call before
    it marked, that the two calls share."""
    system = [{"type": "text", "text": "You fix bugs in Python. " * 220, "cache_control": _MARK}]
    with (
        ScriptedAnthropic(lambda body: "ok") as up,
        proxy_for(up, "anthropic", strategy="refold advance=fixed every=12") as proxy,
    ):
        client = anthropic_client(proxy)
        for n in range(1, 31):
            client.messages.create(
                model="claude-test",
                max_tokens=16,
                system=system,
                messages=_claude_code_marks(_steps(n, 30)),
            )
        strategy = next(iter(proxy.proxy.manager.sessions.values())).strategy
    assert strategy.advances >= 2  # type: ignore[attr-defined]
    bodies, bills = up.calls, up.bills
    assert all(len(marked(b)) <= 4 for b in bodies)
    far = 0
    for k in range(1, len(bodies)):
        shared, near = _shared_mark(bodies[k - 1], bodies[k])
        assert bills[k].cached.read >= shared > 0
        far += not near
    assert far >= 2  # advances whose shared prefix ends beyond the lookback of the newest marks


def _shared_mark(before: dict[str, Any], after: dict[str, Any]) -> tuple[int, bool]:
    """The tokens through the last block ``before`` marked that ``after`` still has (its
    prefix unchanged), and whether ``after`` has another mark within the lookback after it
    (one that would read it without a mark on that very block)."""
    old, new, same, ends = _compared(before, after)
    shared = [i for i, (_, mark) in enumerate(old[:same]) if mark and ends[i + 1] >= 1024]
    if not shared:
        return 0, True
    last = shared[-1]
    others = [j for j, (_, mark) in enumerate(new) if mark and j != last]
    return ends[last + 1], any(last <= j <= last + LOOKBACK_BLOCKS for j in others)


_MARK = {"type": "ephemeral"}
Blocks = list[tuple[str, bool]]


def _compared(
    before: dict[str, Any], after: dict[str, Any]
) -> tuple[Blocks, Blocks, int, list[int]]:
    """Both bodies' cacheable blocks, how many leading ones they share, and the token count
    of ``after`` through each of its blocks (``ends[i]``: before block ``i``)."""
    old, new = anthropic_blocks(before), anthropic_blocks(after)
    pairs = enumerate(zip(old, new, strict=False))
    same = next((i for i, (a, b) in pairs if a[0] != b[0]), min(len(old), len(new)))
    ends = [0]
    for text_, _ in new:
        ends.append(ends[-1] + -(-len(text_) // 4))
    return old, new, same, ends


def _readable(before: dict[str, Any], after: dict[str, Any]) -> tuple[int, bool]:
    """The tokens ``after`` can read from what ``before`` wrote (through the last block
    ``before`` marked that ``after`` still has, with a mark of ``after`` within the 20-block
    lookback after it), and whether that block was the proxy's (not the system's nor the
    newest message's)."""
    old, new, same, ends = _compared(before, after)
    marks = [i for i, (_, mark) in enumerate(new) if mark]
    read = [
        i
        for i, (_, mark) in enumerate(old[:same])
        if mark and ends[i + 1] >= 1024 and any(i <= j <= i + LOOKBACK_BLOCKS for j in marks)
    ]
    if not read:
        return 0, False
    system = len(before.get("tools") or []) + len(before["system"])
    newest = len(old) - len(before["messages"][-1]["content"])
    return ends[read[-1] + 1], system <= read[-1] < newest


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({"model": "m", "messages": [_user("x")]}, "max_tokens"),
        ({"model": "m", "max_tokens": 8, "messages": []}, "messages"),
        (
            {"model": "m", "max_tokens": 8, "messages": [{"role": "robot", "content": "x"}]},
            "messages.0.role",
        ),
        (
            {
                "model": "m",
                "max_tokens": 8,
                "messages": [{"role": "user", "content": [{"type": "tool_result"}]}],
            },
            "messages.0.content.0.tool_use_id",
        ),
        (
            {
                "model": "m",
                "max_tokens": 8,
                "messages": [{"role": "user", "content": [{"text": "x"}]}],
            },
            "messages.0.content.0",
        ),
        ({"model": "m", "max_tokens": 8, "system": 3, "messages": [_user("x")]}, "system"),
    ],
)
def test_bad_requests_get_anthropic_errors_naming_the_field(
    body: dict[str, Any], where: str
) -> None:
    with ScriptedAnthropic() as up, proxy_for(up, "anthropic") as proxy:
        answer = httpx.post(
            f"{root(proxy)}/v1/messages",
            json=body,
            headers={"x-api-key": TOKEN, "anthropic-version": "2023-06-01"},
        )
    assert answer.status_code == 400
    error = answer.json()
    assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
    assert error["error"]["message"].startswith(where)
    assert up.requests == []


def test_the_clients_x_api_key_goes_upstream_untouched_and_the_token_never() -> None:
    with ScriptedAnthropic(["ok"]) as up, proxy_for(up, "anthropic") as proxy:
        headers = {
            "x-api-key": "sk-ant-own",
            "x-contextfold-token": TOKEN,
            "anthropic-version": "2023-06-01",
        }
        body = {"model": "m", "max_tokens": 8, "messages": [_user("hi")]}
        assert (
            httpx.post(
                f"{root(proxy)}/v1/messages?beta=true", json=body, headers=headers
            ).status_code
            == 200
        )
        as_key = {"x-api-key": TOKEN, "anthropic-version": "2023-06-01"}  # the token as the key
        assert (
            httpx.post(f"{root(proxy)}/v1/messages", json=body, headers=as_key).status_code == 401
        )
    first = up.requests[0]
    assert first.headers["x-api-key"] == "sk-ant-own" and first.query == "beta=true"
    assert "x-contextfold-token" not in first.headers


def test_an_upstream_error_comes_back_in_anthropics_shape() -> None:
    with ScriptedAnthropic() as up, proxy_for(up, "anthropic") as proxy:
        up.fail = (529, "Overloaded")
        with pytest.raises(anthropic.APIStatusError) as info:
            anthropic_client(proxy).messages.create(model="m", max_tokens=8, messages=[_user("x")])
    assert info.value.status_code == 529  # what Claude Code retries and falls back on
    error = info.value.body["error"]
    assert info.value.body["type"] == "error" and error["type"] == "overloaded_error"
    assert "Overloaded" in error["message"]


def test_count_tokens_is_the_upstreams_own_count() -> None:
    with ScriptedAnthropic() as up, proxy_for(up, "anthropic") as proxy:
        counted = anthropic_client(proxy).messages.count_tokens(
            model="m", messages=[_user("How many tokens is this?")]
        )
    assert counted.input_tokens > 0 and up.requests[0].path == "/v1/messages/count_tokens"


def _chat_reply(body: dict[str, Any]) -> dict[str, Any]:
    if body["messages"][-1]["role"] == "tool":
        return {"role": "assistant", "content": "Sunny in Oslo."}
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "weather", "arguments": '{"city": "Oslo"}'},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


@pytest.mark.parametrize("stream", [False, True])
def test_messages_are_translated_for_a_chat_completions_upstream(stream: bool) -> None:
    with ScriptedServer(_chat_reply) as up, proxy_for(up, "chat") as proxy:
        client = anthropic_client(proxy)
        messages: list[Any] = [_user("Weather in Oslo?")]
        kwargs: dict[str, Any] = {
            "model": "m",
            "max_tokens": 32,
            "system": "Be brief.",
            "tools": [WEATHER],
        }
        if stream:
            with client.messages.stream(messages=messages, **kwargs) as s:
                first = s.get_final_message()
        else:
            first = client.messages.create(messages=messages, **kwargs)
        call = first.content[-1]
        assert (
            call.type == "tool_use"
            and call.input == {"city": "Oslo"}
            and first.stop_reason == "tool_use"
        )
        messages += [
            {"role": "assistant", "content": [b.model_dump() for b in first.content]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "sunny"}],
            },
        ]
        second = client.messages.create(messages=messages, **kwargs)
    assert second.content[0].text == "Sunny in Oslo."
    sent = up.requests[-1][1]
    assert sent["messages"][0] == {"role": "system", "content": "Be brief."}
    assert sent["messages"][-1] == {"role": "tool", "content": "sunny", "tool_call_id": call.id}
    assert sent["max_tokens"] == 32
    assert {t["function"]["name"] for t in sent["tools"]} == {"weather", "restore"}
