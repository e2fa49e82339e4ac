"""What used to be lost on the way upstream: images on a translated path (carried as Chat
Completions image parts; a document, which a Chat Completions body cannot carry, is a 400),
a tool result's ``is_error`` (said in the tool message's text), every repeated
``anthropic-beta`` header (joined), and ``?beta=true`` on ``count_tokens`` (kept)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from contextfold.testing.upstreams.anthropic import ScriptedAnthropic
from contextfold.testing.upstreams.chat import ScriptedServer
from tests._protocols import CLIENT_KEY, TOKEN, proxy_for, root, sessions

ANTHROPIC_HEADERS = {"x-api-key": CLIENT_KEY, "x-contextfold-token": TOKEN}
OPENAI_HEADERS = {"authorization": f"Bearer {CLIENT_KEY}", "x-contextfold-token": TOKEN}
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5E"
    "rkJggg=="
)
IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
URL_IMAGE = {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}
DATA_URL = f"data:image/png;base64,{PNG}"


def _messages(proxy: Any, messages: list[dict[str, Any]], **extra: Any) -> httpx.Response:
    body = {"model": "m", "max_tokens": 8, "messages": messages, **extra}
    url = f"{root(proxy)}/v1/messages"
    return httpx.post(url, json=body, headers=ANTHROPIC_HEADERS, timeout=30)


def _sent(up: ScriptedServer) -> list[dict[str, Any]]:
    return list(up.requests[-1][1]["messages"])


def test_an_anthropic_clients_images_reach_a_chat_upstream_as_image_parts() -> None:
    user = {"role": "user", "content": [{"type": "text", "text": "what is it?"}, IMAGE, URL_IMAGE]}
    with ScriptedServer() as up, proxy_for(up, "chat") as proxy:
        assert _messages(proxy, [user]).status_code == 200
    assert _sent(up)[-1] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "what is it?"},
            {"type": "image_url", "image_url": {"url": DATA_URL}},
            {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        ],
    }


def test_an_image_in_a_tool_result_follows_the_results_as_a_user_message() -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "shot", "input": {}}
    result = {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [{"type": "text", "text": "the screen"}, IMAGE],
    }
    messages = [
        {"role": "user", "content": "take a screenshot"},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [result, {"type": "text", "text": "and?"}]},
    ]
    tools = [{"name": "shot", "input_schema": {"type": "object"}}]
    with ScriptedServer() as up, proxy_for(up, "chat") as proxy:
        assert _messages(proxy, messages, tools=tools).status_code == 200
    sent = _sent(up)
    roles = [m["role"] for m in sent]
    assert roles[-4:] == ["assistant", "tool", "user", "user"]
    tool, images, question = sent[-3:]
    assert tool["content"] == "the screen" and question["content"] == "and?"
    assert images["content"][0]["type"] == "text" and "toolu_1" in images["content"][0]["text"]
    assert images["content"][1] == {"type": "image_url", "image_url": {"url": DATA_URL}}


def test_a_responses_clients_input_image_reaches_a_chat_upstream() -> None:
    parts = [
        {"type": "input_text", "text": "look"},
        {"type": "input_image", "image_url": DATA_URL, "detail": "low"},
    ]
    body = {"model": "m", "input": [{"type": "message", "role": "user", "content": parts}]}
    with ScriptedServer() as up, proxy_for(up, "chat") as proxy:
        answer = httpx.post(f"{proxy.url}/responses", json=body, headers=OPENAI_HEADERS)
        assert answer.status_code == 200, answer.text
    assert _sent(up)[-1]["content"] == [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": DATA_URL, "detail": "low"}},
    ]


DOCUMENT = {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                           "data": "JVBERi0="}}  # fmt: skip


@pytest.mark.parametrize(
    ("block", "api"),
    [
        (DOCUMENT, "anthropic"),
        ({"type": "image", "source": {"type": "file", "file_id": "file_1"}}, "anthropic"),
        ({"type": "input_file", "file_id": "file_1"}, "responses"),
        ({"type": "input_image", "file_id": "file_1"}, "responses"),
    ],
)
def test_media_a_chat_body_cannot_carry_is_a_400_not_a_silent_drop(
    tmp_path: Path, block: dict[str, Any], api: str
) -> None:
    store = tmp_path / "s.db"
    with ScriptedServer() as up, proxy_for(up, "chat", store) as proxy:
        if api == "anthropic":
            user = {"role": "user", "content": [{"type": "text", "text": "read it"}, block]}
            answer = _messages(proxy, [user])
            message = answer.json()["error"]["message"]
        else:
            parts = [{"type": "input_text", "text": "read it"}, block]
            body = {"model": "m", "input": [{"role": "user", "content": parts}]}
            answer = httpx.post(f"{proxy.url}/responses", json=body, headers=OPENAI_HEADERS)
            message = answer.json()["error"]["message"]
        assert answer.status_code == 400, answer.text
        assert "Chat Completions" in message and block["type"] in message
        assert up.requests == []
    assert sessions(store) == {}


def test_is_error_is_said_in_the_tool_messages_text() -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "run", "input": {}}
    failed = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "no such file",
              "is_error": True}  # fmt: skip
    messages = [
        {"role": "user", "content": "run it"},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [failed]},
    ]
    tools = [{"name": "run", "input_schema": {"type": "object"}}]
    with ScriptedServer() as up, proxy_for(up, "chat") as proxy:
        assert _messages(proxy, messages, tools=tools).status_code == 200
    tool = _sent(up)[-1]
    assert tool["role"] == "tool" and tool["content"] == "[error] no such file"


def test_every_anthropic_beta_header_goes_upstream_and_count_tokens_keeps_its_query() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    headers = [
        *ANTHROPIC_HEADERS.items(),
        ("anthropic-version", "2023-06-01"),
        ("anthropic-beta", "claude-code-20250219"),
        ("anthropic-beta", "context-management-2025-06-27,oauth-2025-04-20"),
    ]
    with ScriptedAnthropic() as up, proxy_for(up, "anthropic") as proxy:
        for path in ("/v1/messages?beta=true", "/v1/messages/count_tokens?beta=true"):
            sent = {**body, "max_tokens": 8} if "count" not in path else body
            answer = httpx.post(f"{root(proxy)}{path}", json=sent, headers=headers)
            assert answer.status_code == 200, answer.text
    for received in up.requests:
        assert received.query == "beta=true", received.path
        betas = received.headers["anthropic-beta"]
        assert betas == "claude-code-20250219,context-management-2025-06-27,oauth-2025-04-20"
