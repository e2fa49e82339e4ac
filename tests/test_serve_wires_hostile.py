"""Anthropic and Responses upstreams that answer what they should not: each reply the proxy
cannot use becomes a 502 (or, once a stream has begun, an error event) in the client's API's
shape naming what was wrong; nothing is stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests._hostile import HostileServer, Raw
from tests._protocols import TOKEN, proxy_for, root, sessions


def _sse(*events: tuple[str, dict[str, Any]]) -> Raw:
    data = [f"event: {n}\ndata: {json.dumps(d)}\n\n".encode() for n, d in events]
    return Raw(data, content_type="text/event-stream", length=False)


START = (
    "message_start",
    {"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 3}}},
)
TEXT = (
    "content_block_start",
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
)
STOP = ("message_stop", {"type": "message_stop"})


@pytest.mark.parametrize(
    ("reply", "needle"),
    [
        (Raw([json.dumps({"type": "message", "content": "text"}).encode()]), "content"),
        (
            Raw(
                [
                    json.dumps(
                        {"type": "message", "content": [], "usage": {"input_tokens": -1}}
                    ).encode()
                ]
            ),
            "usage",
        ),
        (_sse(START, TEXT), "message_stop"),
        (
            _sse(START, ("content_block_start", {"type": "content_block_start", "index": "x"})),
            "index",
        ),
        (
            _sse(
                START,
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}},
                    },
                ),
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "input_json_delta", "partial_json": "{nope"},
                    },
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                STOP,
            ),
            "not JSON",
        ),
        (
            _sse(
                START,
                (
                    "error",
                    {
                        "type": "error",
                        "error": {"type": "overloaded_error", "message": "Overloaded"},
                    },
                ),
            ),
            "Overloaded",
        ),
    ],
)
def test_anthropic_replies_the_proxy_cannot_use(tmp_path: Path, reply: Raw, needle: str) -> None:
    store = tmp_path / "s.db"
    stream = reply.content_type == "text/event-stream"
    body = {
        "model": "m",
        "max_tokens": 8,
        "stream": stream,
        "messages": [{"role": "user", "content": "hi"}],
    }
    headers = {
        "x-api-key": "sk-own",
        "x-contextfold-token": TOKEN,
        "anthropic-version": "2023-06-01",
    }
    with HostileServer(lambda b: reply) as up, proxy_for(up, "anthropic", store) as proxy:
        answer = httpx.post(f"{root(proxy)}/v1/messages", json=body, headers=headers, timeout=30)
    text = answer.text
    if answer.status_code == 200:  # the stream had begun: an error event ends it
        assert "event: error" in text
        error = json.loads(text.split("event: error\ndata: ")[1].split("\n")[0])
    else:
        assert answer.status_code == 502
        error = answer.json()
    assert error["type"] == "error" and needle in error["error"]["message"]
    assert sessions(store) == {}


CREATED = ("response.created", {"type": "response.created", "response": {"id": "r", "output": []}})


@pytest.mark.parametrize(
    ("reply", "needle"),
    [
        (
            Raw([json.dumps({"output": [{"type": "function_call", "name": "f"}]}).encode()]),
            "call_id",
        ),
        (Raw([json.dumps({"output": [], "usage": {"input_tokens": "many"}}).encode()]), "usage"),
        (_sse(CREATED), "response.completed"),
        (
            _sse(
                CREATED,
                (
                    "response.failed",
                    {"type": "response.failed", "response": {"error": {"message": "boom"}}},
                ),
            ),
            "boom",
        ),
    ],
)
def test_responses_replies_the_proxy_cannot_use(tmp_path: Path, reply: Raw, needle: str) -> None:
    store = tmp_path / "s.db"
    stream = reply.content_type == "text/event-stream"
    body = {"model": "m", "input": "hi", "stream": stream}
    headers = {"authorization": "Bearer sk-own", "x-contextfold-token": TOKEN}
    with HostileServer(lambda b: reply) as up, proxy_for(up, "responses", store) as proxy:
        answer = httpx.post(f"{proxy.url}/responses", json=body, headers=headers, timeout=30)
    if answer.status_code == 200:
        assert "event: error" in answer.text
        error = json.loads(answer.text.split("event: error\ndata: ")[1].split("\n")[0])
        message = error["message"]
    else:
        assert answer.status_code == 502
        message = answer.json()["error"]["message"]
    assert needle in message
    assert sessions(store) == {}
