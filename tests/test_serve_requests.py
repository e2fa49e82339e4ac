"""Hostile and careless client requests through contextfold serve (real HTTP on 127.0.0.1):
each gets an answer in OpenAI's error shape naming what is wrong, or is served; nothing a
refused request sent is stored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from contextfold.serve.scripted import ScriptedServer
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
