"""A client's bad values on the Messages and Responses routes, direct and translated: each is
a 400 in the client's API's shape naming the field, nothing goes upstream and nothing is
stored; and a client's own JSON reaches the upstream as it sent it, whatever keys it holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from contextfold.testing.upstreams.anthropic import ScriptedAnthropic
from contextfold.testing.upstreams.chat import ScriptedServer
from contextfold.testing.upstreams.responses import ScriptedResponses
from tests._protocols import CLIENT_KEY, TOKEN, proxy_for, root, sessions

ANTHROPIC_HEADERS = {"x-api-key": CLIENT_KEY, "x-contextfold-token": TOKEN}
OPENAI_HEADERS = {"authorization": f"Bearer {CLIENT_KEY}", "x-contextfold-token": TOKEN}


def _messages(proxy: Any, extra: dict[str, Any], **headers: Any) -> httpx.Response:
    body = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
    return httpx.post(
        f"{root(proxy)}/v1/messages",
        json={**body, **extra},
        headers={**ANTHROPIC_HEADERS, **headers},
        timeout=30,
    )


def _responses(proxy: Any, extra: dict[str, Any]) -> httpx.Response:
    body = {"model": "m", "input": "hi", **extra}
    return httpx.post(f"{proxy.url}/responses", json=body, headers=OPENAI_HEADERS, timeout=30)


def _upstream(kind: str) -> Any:
    return {"chat": ScriptedServer, "anthropic": ScriptedAnthropic}.get(kind, ScriptedResponses)()


def _sent(up: Any) -> int:
    return len(up.requests)


@pytest.mark.parametrize("upstream", ["chat", "anthropic"])
@pytest.mark.parametrize("choice", [5, [], "auto", {"type": 7}, {"type": "tool"}])
def test_a_bad_tool_choice_on_messages_is_a_400_in_anthropics_shape(
    tmp_path: Path, upstream: str, choice: Any
) -> None:
    store = tmp_path / "s.db"
    with _upstream(upstream) as up, proxy_for(up, upstream, store) as proxy:
        answer = _messages(proxy, {"tool_choice": choice})
        assert answer.status_code == 400, answer.text
        error = answer.json()
        assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
        assert error["error"]["message"].startswith("tool_choice")
        assert _sent(up) == 0
    assert sessions(store) == {}


@pytest.mark.parametrize("upstream", ["chat", "responses"])
@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"tool_choice": 5}, "tool_choice"),
        ({"tool_choice": []}, "tool_choice"),
        ({"tool_choice": "sometimes"}, "tool_choice"),
        ({"tool_choice": {"name": "f"}}, "tool_choice"),
        ({"text": "x"}, "text"),
        ({"text": {"format": "json"}}, "text.format"),
    ],
)
def test_a_bad_option_on_responses_is_a_400_in_openais_shape(
    tmp_path: Path, upstream: str, extra: dict[str, Any], param: str
) -> None:
    store = tmp_path / "s.db"
    with _upstream(upstream) as up, proxy_for(up, upstream, store) as proxy:
        answer = _responses(proxy, extra)
        assert answer.status_code == 400, answer.text
        error = answer.json()["error"]
        assert error["type"] == "invalid_request_error" and error["param"] == param
        assert _sent(up) == 0
    assert sessions(store) == {}


@pytest.mark.parametrize("name", ["anthropic-beta", "anthropic-version", "x-api-key"])
def test_a_header_that_is_not_ascii_is_a_400_naming_it(tmp_path: Path, name: str) -> None:
    store = tmp_path / "s.db"
    with ScriptedAnthropic() as up, proxy_for(up, "anthropic", store) as proxy:
        answer = _messages(proxy, {}, **{name: "caf\xe9-2025".encode("latin-1")})
        assert answer.status_code == 400, answer.text
        error = answer.json()["error"]
        assert error["type"] == "invalid_request_error" and name in error["message"]
        assert _sent(up) == 0
    assert sessions(store) == {}


def test_good_values_are_still_served(tmp_path: Path) -> None:
    with ScriptedServer() as up, proxy_for(up, "chat") as proxy:
        choice = {"type": "tool", "name": "f"}
        tools = [{"name": "f", "input_schema": {"type": "object"}}]
        assert _messages(proxy, {"tool_choice": choice, "tools": tools}).status_code == 200
        fmt = {"format": {"type": "json_schema", "name": "n", "schema": {"type": "object"}}}
        answer = _responses(proxy, {"tool_choice": "auto", "text": fmt})
        assert answer.status_code == 200, answer.text
        assert up.requests[-1][1]["response_format"]["type"] == "json_schema"


@pytest.mark.parametrize("upstream", ["chat", "anthropic"])
@pytest.mark.parametrize(
    ("content", "where"),
    [
        ("", "messages.0.content.0.text"),
        ("  \n", "messages.0.content.0.text"),
        ([{"type": "text", "text": ""}], "messages.0.content.0.text"),
        (
            [{"type": "text", "text": "fine"}, {"type": "text", "text": " "}],
            "messages.0.content.1.text",
        ),
    ],
)
def test_an_empty_user_text_is_a_400_as_anthropic_answers_it(
    tmp_path: Path, upstream: str, content: Any, where: str
) -> None:
    store = tmp_path / "s.db"
    with _upstream(upstream) as up, proxy_for(up, upstream, store) as proxy:
        answer = _messages(proxy, {"messages": [{"role": "user", "content": content}]})
        assert answer.status_code == 400, answer.text
        message = answer.json()["error"]["message"]
        assert message.startswith(where) and "text content blocks must" in message
        assert _sent(up) == 0
    assert sessions(store) == {}


LAYOUT_KEYS: list[dict[str, Any]] = [
    {"type": "text", "text": "hi", "$raw": {"type": "text", "text": "injected"}},
    {"type": "text", "text": "one", "$call": 0, "content": 7, "$$x": [1]},
    {
        "type": "text",
        "text": "cited",
        "citations": [{"type": "char_location", "cited_text": "c", "text": 3, "$raw": 1}],
    },
    {"type": "image", "source": {"type": "url", "url": "https://x/y.png"}, "$call": 1},
]


def test_layout_keys_in_a_clients_messages_go_upstream_unchanged(tmp_path: Path) -> None:
    """``$raw``, ``$call``, ints where texts go: the proxy's own layout notation, inside a
    client's blocks, reach the upstream as the client sent them."""
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "out", "$raw": 5}
    call = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"$call": 0}, "$raw": 2}
    messages = [
        {"role": "user", "content": LAYOUT_KEYS},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}, call]},
        {"role": "user", "content": [result, {"type": "text", "text": "go on", "output": 2}]},
    ]
    with ScriptedAnthropic() as up, proxy_for(up, "anthropic", tmp_path / "s.db") as proxy:
        tools = [{"name": "f", "input_schema": {"type": "object"}}]
        answer = _messages(proxy, {"messages": messages, "tools": tools})
        assert answer.status_code in (200, 400), answer.text  # the upstream judges the keys
        assert up.requests[0].body["messages"] == messages


def test_layout_keys_in_a_clients_input_go_upstream_unchanged(tmp_path: Path) -> None:
    part = {"type": "input_text", "text": "hi", "$raw": "x", "annotations": [{"text": 1}]}
    image = {"type": "input_image", "image_url": "https://x/y.png", "$call": 0}
    items = [
        {"type": "message", "role": "user", "content": [part, image], "$call": 3},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}", "$raw": 1},
        {"type": "function_call_output", "call_id": "c1", "output": "done", "content": 4},
        {"type": "message", "role": "user", "content": "go on"},
    ]
    with ScriptedResponses() as up, proxy_for(up, "responses", tmp_path / "s.db") as proxy:
        answer = _responses(proxy, {"input": items})
        assert answer.status_code in (200, 400), answer.text
        sent = up.requests[0].body["input"]
        assert sent[:3] == items[:3]
