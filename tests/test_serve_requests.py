"""Hostile and careless client requests through contextfold serve (real HTTP on 127.0.0.1):
each gets an answer in OpenAI's error shape naming what is wrong, or is served; nothing a
refused request sent is stored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from contextfold.testing.upstreams.chat import ScriptedServer
from tests._serve import TOKEN, canonical, serving, stored

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _post(proxy: Any, body: dict[str, Any] | bytes, **headers: str) -> httpx.Response:
    url = f"{proxy.url}/chat/completions"
    if isinstance(body, bytes):
        sent = {"Content-Type": "application/json", **AUTH, **headers}
        return httpx.post(url, content=body, headers=sent, timeout=30)
    return httpx.post(url, json=body, headers={**AUTH, **headers}, timeout=30)


def _silent_then_echo(body: dict[str, Any]) -> dict[str, Any]:
    """Answers the first user message with nothing, every later one with its text."""
    users = [m for m in body["messages"] if m["role"] == "user"]
    if len(users) == 1:
        return {"role": "assistant", "content": ""}
    return {"role": "assistant", "content": f"ok: {users[-1]['content']}"}


@pytest.mark.parametrize("strategy", ["full", "refold", "window", "mask"])
@pytest.mark.parametrize(
    "empty",
    [
        {"role": "assistant", "content": None},
        {"role": "assistant", "content": None, "tool_calls": []},
        {"role": "assistant", "content": ""},
    ],
)
def test_an_empty_model_reply_sent_back_keeps_the_conversation_going(
    tmp_path: Path, strategy: str, empty: dict[str, Any]
) -> None:
    db = tmp_path / "s.db"
    with ScriptedServer(_silent_then_echo) as up, serving(up, db, strategy=strategy) as proxy:
        messages: list[dict[str, Any]] = [{"role": "user", "content": "hello"}]
        first = _post(proxy, {"model": "m", "messages": messages})
        assert first.status_code == 200, first.text
        assert first.json()["choices"][0]["message"]["content"] == ""
        messages += [empty, {"role": "user", "content": "are you there?"}]
        for turn in range(3):
            reply = _post(proxy, {"model": "m", "messages": messages})
            assert reply.status_code == 200, reply.text
            text = reply.json()["choices"][0]["message"]["content"]
            assert text == f"ok: {messages[-1]['content']}"
            messages += [{"role": "assistant", "content": text}]
            messages += [{"role": "user", "content": f"next {turn}"}]
        sent = up.requests[1][1]["messages"]
        assert {"role": "assistant", "content": ""} in sent  # what an upstream accepts
    assert list(stored(db).values()) == [canonical(messages[:-2])]


@pytest.mark.parametrize(
    "user",
    [
        {"role": "user", "content": None},
        {"role": "user", "content": ""},
        {"role": "user", "content": "  \n"},
        {"role": "user"},
        {"role": "user", "content": []},
    ],
)
def test_a_null_or_empty_user_message_is_a_400(tmp_path: Path, user: dict[str, Any]) -> None:
    db = tmp_path / "s.db"
    with ScriptedServer() as up, serving(up, db) as proxy:
        opening = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yes"}]
        reply = _post(proxy, {"model": "m", "messages": [*opening, user]})
        assert reply.status_code == 400, reply.text
        error = reply.json()["error"]
        assert error["type"] == "invalid_request_error" and error["param"] == "messages[2]"
        assert "user message" in error["message"] and "text" in error["message"]
        assert up.requests == []
    assert stored(db) == {}


def _chat(messages: str, extra: str = "") -> bytes:
    return ('{"model": "m", "messages": ' + messages + extra + "}").encode()


USER = '[{"role": "user", "content": "x"}]'
CALLS = (
    '[{"role": "user", "content": "x"}, {"role": "assistant", "content": "a", "tool_calls": %s}]'
)


@pytest.mark.parametrize(
    ("body", "param", "needle"),
    [
        (_chat(CALLS % "5"), "messages[1].tool_calls", "must be an array"),
        (_chat(CALLS % "true"), "messages[1].tool_calls", "must be an array"),
        (_chat(CALLS % '{"id": "c"}'), "messages[1].tool_calls", "must be an array"),
        (_chat(USER, ', "x": ' + "[" * 10_000 + "]" * 10_000), None, "nested more than"),
        (_chat(USER, ', "x": ' + "[" * 150 + "]" * 150), None, "nested more than"),
        (_chat(USER, ', "seed": ' + "7" * 5000), None, "5,000 digits"),
        (_chat(USER, ', "temperature": NaN'), None, "NaN is not a JSON number"),
        (_chat(USER, ', "temperature": Infinity'), None, "Infinity is not a JSON number"),
        (_chat(USER, ', "temperature": -Infinity'), None, "-Infinity is not a JSON number"),
        (_chat(USER, ', "temperature": 1e999'), None, "out of range"),
        (_chat('[{"role": "user", "content": "a\\ud800b"}]'), "messages[0].content", "surrogate"),
        (_chat('[{"role": "user", "content": "x", "\\udfff": 1}]'), "messages[0]", "surrogate"),
        (_chat(USER, ', "max_tokens": "12"'), "max_tokens", "whole number"),
        (_chat(USER, ', "max_tokens": 0'), "max_tokens", "at least 1"),
        (_chat(USER, ', "max_completion_tokens": -5'), "max_completion_tokens", "at least 1"),
        (_chat(USER, ', "max_tokens": true'), "max_tokens", "whole number"),
        (_chat(USER, ', "max_tokens": 1.5'), "max_tokens", "whole number"),
    ],
    ids=[
        "tool_calls-number",
        "tool_calls-true",
        "tool_calls-object",
        "nested-10000",
        "nested-150",
        "integer-5000-digits",
        "nan",
        "infinity",
        "minus-infinity",
        "1e999",
        "lone-surrogate",
        "lone-surrogate-key",
        "max_tokens-string",
        "max_tokens-0",
        "max_completion_tokens-negative",
        "max_tokens-true",
        "max_tokens-float",
    ],
)
def test_malformed_bodies_get_a_400_naming_the_field_and_store_nothing(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], body: bytes, param: str | None, needle: str
) -> None:
    db = tmp_path / "s.db"
    with ScriptedServer() as up, serving(up, db) as proxy:
        reply = _post(proxy, body)
        assert reply.status_code == 400, reply.text
        error = reply.json()["error"]
        assert needle in error["message"] and error["param"] == param
        assert error["type"] == "invalid_request_error"
        assert up.requests == []
    assert stored(db) == {}
    assert "Traceback" not in capfd.readouterr().err


def test_unknown_routes_and_methods_answer_in_openai_json(tmp_path: Path) -> None:
    with ScriptedServer() as up, serving(up, None) as proxy:
        base = proxy.url.removesuffix("/v1")
        wrong = httpx.get(f"{proxy.url}/chat/completions", headers=AUTH)
        assert wrong.status_code == 405 and wrong.headers["allow"] == "POST"
        error = wrong.json()["error"]
        assert error["type"] == "invalid_request_error"
        assert "GET /v1/chat/completions" in error["message"] and "POST" in error["message"]
        for method, path in (("POST", "/v1/completions"), ("GET", "/nowhere"), ("PUT", "/")):
            missing = httpx.request(method, f"{base}{path}", headers=AUTH)
            assert missing.status_code == 404, (method, path)
            body = missing.json()
            assert body["error"]["type"] == "not_found_error"
            assert f"{method} {path}" in body["error"]["message"]
            assert "POST /v1/chat/completions" in body["routes"]
            assert {"GET /v1/models", "GET /health", "GET /metrics"} <= set(body["routes"])
        assert up.requests == []
