"""contextfold serve end to end: the openai SDK -> the proxy -> a scripted upstream, all real
HTTP on 127.0.0.1. Round trips (streamed and not), sessions kept apart, a restore answered by
the proxy, auth, upstream failures, malformed requests, the store's permissions."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from contextfold.core.errors import StoreError
from contextfold.core.store import SQLiteStore
from contextfold.serve import ServeConfig
from contextfold.testing.upstreams.chat import ScriptedServer, echo_reply
from tests._serve import TOKEN, canonical, client, metric, serving, stored, tool_call

SYSTEM = {"role": "system", "content": "You are terse."}
WEATHER = {
    "type": "function",
    "function": {"name": "weather", "parameters": {"type": "object", "properties": {}}},
}


def _message(reply: Any) -> dict[str, Any]:
    return dict(reply.choices[0].message.model_dump(exclude_none=True))


def test_non_streamed_round_trips_keep_one_session_and_send_the_view(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with ScriptedServer() as up, serving(up, db, strategy="refold") as proxy:
        chat = client(proxy)
        messages: list[dict[str, Any]] = [SYSTEM, {"role": "user", "content": "hello"}]
        for turn in range(3):
            reply = chat.chat.completions.create(model="m", messages=messages)
            assert reply.choices[0].message.content == f"ok: {messages[-1]['content']}"
            messages += [_message(reply), {"role": "user", "content": f"next {turn}"}]
        assert reply.usage is not None and reply.usage.prompt_tokens_details is not None
        assert reply.usage.prompt_tokens_details.cached_tokens > 0  # the view's prefix is stable
        sent = up.requests[-1][1]["messages"]
        assert sent[0] == SYSTEM  # refold adds nothing before its first fold: the view is the chat
        assert [t["function"]["name"] for t in up.requests[-1][1]["tools"]] == ["restore"]
    with pytest.raises(StoreError, match="is closed"):  # stopping the proxy closed its store
        proxy.proxy.manager.store.list_sessions()
    sessions = stored(db)
    assert list(sessions.values()) == [canonical(messages[:-2])]  # all the client sent
    with SQLiteStore(db) as store:
        (sid,) = store.list_sessions()
        assert len(store.load_calls(sid)) == 3
    assert os.stat(db).st_mode & 0o777 == 0o600


def _weather_then_answer(body: dict[str, Any]) -> dict[str, Any]:
    last = body["messages"][-1]
    if last["role"] == "tool":
        return {"role": "assistant", "content": f"It is {last['content']} today, I checked."}
    return {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [tool_call("c1", "weather")],
    }


def test_streamed_round_trip_with_a_client_tool(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with ScriptedServer(_weather_then_answer) as up, serving(up, db, strategy="full") as proxy:
        chat = client(proxy)
        messages: list[dict[str, Any]] = [SYSTEM, {"role": "user", "content": "weather?"}]
        stream = chat.chat.completions.create(
            model="m",
            messages=messages,
            tools=[WEATHER],
            stream=True,
        )
        text, calls, finish = "", [], None
        for chunk in stream:
            delta = chunk.choices[0].delta
            text += delta.content or ""
            calls += delta.tool_calls or []
            finish = chunk.choices[0].finish_reason or finish
        assert (text, finish) == ("Let me look.", "tool_calls")
        assert [(c.id, c.function.name, c.function.arguments) for c in calls] == [
            ("c1", "weather", "{}")
        ]
        assistant = {
            "role": "assistant",
            "content": text,
            "tool_calls": [tool_call("c1", "weather")],
        }
        messages += [assistant, {"role": "tool", "tool_call_id": "c1", "content": "sunny"}]
        stream = chat.chat.completions.create(
            model="m",
            messages=messages,
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = list(stream)
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
            "It is sunny today, I checked."
        )
        assert chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens > 0
        assert len({c.id for c in chunks}) == 1
    assert list(stored(db).values()) == [canonical(messages)]


def _restore_then_answer(body: dict[str, Any]) -> dict[str, Any]:
    last = body["messages"][-1]
    if last["role"] == "tool":
        return {"role": "assistant", "content": f"Restored: {last['content'][:60]}"}
    if last["content"] == "what did step 0 say?":
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [tool_call("r1", "restore", step=0)],
        }
    return echo_reply(body)


@pytest.mark.parametrize("stream", [False, True])
def test_a_restore_is_answered_by_the_proxy_and_never_reaches_the_client(
    tmp_path: Path, stream: bool
) -> None:
    db = tmp_path / "s.db"
    with ScriptedServer(_restore_then_answer) as up, serving(up, db, strategy="refold") as proxy:
        messages = [SYSTEM, {"role": "user", "content": "the code is 4417"}]
        messages += [{"role": "assistant", "content": "noted"}]
        messages += [{"role": "user", "content": "what did step 0 say?"}]
        chat = client(proxy)
        if stream:
            chunks = list(chat.chat.completions.create(model="m", messages=messages, stream=True))
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            assert not any(c.choices and c.choices[0].delta.tool_calls for c in chunks)
        else:
            reply = chat.chat.completions.create(model="m", messages=messages)
            assert reply.choices[0].message.tool_calls is None
            assert reply.choices[0].finish_reason == "stop"
            text = reply.choices[0].message.content or ""
        assert text.startswith("Restored: ") and "4417" in text
        assert len(up.requests) == 2
        second = up.requests[1][1]["messages"]
        assert second[-2]["tool_calls"][0]["function"]["name"] == "restore"
        assert second[-1]["role"] == "tool" and "4417" in second[-1]["content"]
    assert list(stored(db).values()) == [canonical(messages)]  # the restore is not a step
    with SQLiteStore(db) as store:
        assert len(store.load_calls(store.list_sessions()[0])) == 2


def test_auth_is_required_and_checked(tmp_path: Path) -> None:
    with ScriptedServer() as up, serving(up, None) as proxy:
        base = proxy.url.removesuffix("/v1")
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        no_token = httpx.post(f"{proxy.url}/chat/completions", json=body)
        assert no_token.status_code == 401
        assert "proxy token" in no_token.json()["error"]["message"]
        wrong = {"Authorization": "Bearer nope"}
        assert (
            httpx.post(f"{proxy.url}/chat/completions", json=body, headers=wrong).status_code == 401
        )
        assert httpx.get(f"{base}/metrics").status_code == 401
        assert httpx.get(f"{proxy.url}/models").status_code == 401
        assert up.requests == []
        ok = {"X-Contextfold-Token": TOKEN, "Authorization": "Bearer upstream-key"}
        assert httpx.post(f"{proxy.url}/chat/completions", json=body, headers=ok).status_code == 200
        assert up.requests[-1][0]["authorization"] == "Bearer upstream-key"  # passed through
        assert httpx.get(f"{base}/health").json()["status"] == "ok"
        metrics = httpx.get(f"{base}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).text
        assert metric(metrics, "requests_total", status="401") == 2
        assert metric(metrics, "requests_total", status="200") == 1
    with pytest.raises(ValueError, match="loopback"):
        ServeConfig(upstream="http://x/v1", no_auth=True, host="0.0.0.0").check()
    with pytest.raises(ValueError, match="token is required"):
        ServeConfig(upstream="http://x/v1").check()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_failing_upstream_gives_its_status_and_message_and_stores_nothing(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    messages = [{"role": "user", "content": "hi"}]
    down = ServeConfig(upstream=f"http://127.0.0.1:{_closed_port()}/v1", token=TOKEN, store=db)
    from contextfold.serve.runner import ProxyThread

    with ProxyThread(down) as proxy:
        with pytest.raises(openai.APIStatusError) as info:
            client(proxy).chat.completions.create(model="m", messages=messages)
        assert info.value.status_code == 502 and "unreachable" in info.value.message
    with ScriptedServer() as up, serving(up, db) as proxy:
        up.fail = (500, "the GPU caught fire")
        for stream in (False, True):
            with pytest.raises(openai.APIStatusError) as info:
                client(proxy).chat.completions.create(model="m", messages=messages, stream=stream)
            assert info.value.status_code == 500 and "the GPU caught fire" in info.value.message
        up.fail = (400, "prompt too long for this model")
        with pytest.raises(openai.BadRequestError, match="prompt too long"):
            client(proxy).chat.completions.create(model="m", messages=messages)
        assert stored(db) == {}
        up.fail = None
        client(proxy).chat.completions.create(model="m", messages=messages)
    assert list(stored(db).values()) == [canonical(messages)]


@pytest.mark.parametrize(
    ("body", "status", "needle"),
    [
        (b"{not json", 400, "not valid JSON"),
        (b"[]", 400, "JSON object"),
        (b'{"messages": [{"role": "user", "content": "x"}]}', 400, "'model'"),
        (b'{"model": "m", "messages": []}', 400, "non-empty array"),
        (b'{"model": "m", "messages": [{"role": "robot", "content": "x"}]}', 400, "messages[0]"),
        (
            b'{"model": "m", "messages": [{"role": "tool", "content": "x", "tool_call_id": "a"}]}',
            400,
            "must follow the assistant",
        ),
        (
            b'{"model": "m", "stream": "yes", "messages": [{"role": "user", "content": "x"}]}',
            400,
            "'stream'",
        ),
        (b'{"model": "m", "n": 2, "messages": [{"role": "user", "content": "x"}]}', 400, "'n'"),
        (
            b'{"model": "m", "tools": [{}], "messages": [{"role": "user", "content": "x"}]}',
            400,
            "tools[0]",
        ),
        (
            b'{"model": "m", "messages": [{"role": "user", "content": "' + b"x" * 5000 + b'"}]}',
            413,
            "over the proxy's limit",
        ),
    ],
)
def test_malformed_requests_get_openai_style_errors(body: bytes, status: int, needle: str) -> None:
    with ScriptedServer() as up, serving(up, None, max_body=4096) as proxy:
        headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
        reply = httpx.post(f"{proxy.url}/chat/completions", content=body, headers=headers)
        assert reply.status_code == status
        error = reply.json()["error"]
        assert needle in error["message"] and error["type"] == "invalid_request_error"
        assert up.requests == []
