"""An upstream's error reaches the client in the client's API with its status, type and code
(whole, before a stream, and mid-stream) and its retry headers: an overloaded upstream is what
Claude Code reads as overloaded (529 ``overloaded_error``) and what Codex reads as
``server_overloaded`` (503 ``server_is_overloaded``, or ``response.failed`` with that code);
a rate limit keeps its 429 and ``retry-after``. Nothing of the turn is stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests._hostile import HostileServer, Raw, named, whole
from tests._protocols import TOKEN, proxy_for, root, sessions

ANTHROPIC_OVERLOADED = {
    "type": "error",
    "error": {"type": "overloaded_error", "message": "Overloaded"},
}
ANTHROPIC_LIMITED = {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}}
OPENAI_OVERLOADED = {
    "error": {"type": "service_unavailable_error", "code": "server_is_overloaded",
              "message": "Our servers are currently overloaded.", "param": None}
}  # fmt: skip
OPENAI_LIMITED = {
    "error": {"type": "requests", "code": "rate_limit_exceeded",
              "message": "Rate limit reached. Please try again in 7s.", "param": None}
}  # fmt: skip
GATEWAY_OVERLOADED = {"error": {"type": "overloaded_error", "message": "Overloaded"}}
SERVER_ERROR = {"error": {"type": "server_error", "message": "the GPU caught fire"}}


def _ask(proxy: Any, api: str, stream: bool = False) -> httpx.Response:
    token = {"x-contextfold-token": TOKEN}
    if api == "anthropic":
        body: dict[str, Any] = {"model": "m", "max_tokens": 8}
        body["messages"] = [{"role": "user", "content": "hi"}]
        headers = {**token, "x-api-key": "sk-own", "anthropic-version": "2023-06-01"}
        url = f"{root(proxy)}/v1/messages"
    elif api == "responses":
        body, headers, url = {"model": "m", "input": "hi"}, token, f"{proxy.url}/responses"
    else:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        headers, url = token, f"{proxy.url}/chat/completions"
    return httpx.post(url, json={**body, "stream": stream}, headers=headers, timeout=30)


def _seen(api: str, answer: httpx.Response) -> tuple[int, str | None, str | None]:
    """Status, error type and code as the client got them (code: OpenAI's only)."""
    data = answer.json()
    if api == "anthropic":
        assert data["type"] == "error"
        return answer.status_code, data["error"]["type"], None
    return answer.status_code, data["error"]["type"], data["error"]["code"]


# upstream API, its answer, client API -> (status, type, code) the client sees
WHOLE = [
    ("anthropic", whole(ANTHROPIC_OVERLOADED, 529), "anthropic", (529, "overloaded_error", None)),
    ("anthropic", whole(ANTHROPIC_LIMITED, 429), "anthropic", (429, "rate_limit_error", None)),
    ("responses", whole(OPENAI_OVERLOADED, 503), "responses",
     (503, "service_unavailable_error", "server_is_overloaded")),
    ("responses", whole(OPENAI_LIMITED, 429), "responses",
     (429, "requests", "rate_limit_exceeded")),
    ("chat", whole(GATEWAY_OVERLOADED, 529), "chat", (529, "overloaded_error", None)),
    ("chat", whole(GATEWAY_OVERLOADED, 529), "anthropic", (529, "overloaded_error", None)),
    ("chat", whole(GATEWAY_OVERLOADED, 529), "responses",
     (503, "overloaded_error", "server_is_overloaded")),
    ("chat", whole(OPENAI_OVERLOADED, 503), "anthropic", (529, "overloaded_error", None)),
    ("chat", whole(OPENAI_OVERLOADED, 503), "responses",
     (503, "service_unavailable_error", "server_is_overloaded")),
    ("chat", whole(OPENAI_LIMITED, 429), "anthropic", (429, "rate_limit_error", None)),
    ("chat", whole(OPENAI_LIMITED, 429), "responses", (429, "requests", "rate_limit_exceeded")),
    ("chat", whole(SERVER_ERROR, 500), "chat", (500, "server_error", None)),
    ("chat", whole(SERVER_ERROR, 500), "anthropic", (500, "api_error", None)),
]  # fmt: skip


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(("upstream", "reply", "client", "seen"), WHOLE)
def test_an_upstreams_error_answer_keeps_its_status_and_type_in_the_clients_api(
    tmp_path: Path,
    upstream: str,
    reply: Raw,
    client: str,
    seen: tuple[int, str | None, str | None],
    stream: bool,
) -> None:
    store = tmp_path / "s.db"
    with HostileServer(lambda b: reply) as up, proxy_for(up, upstream, store) as proxy:
        answer = _ask(proxy, client, stream)
    assert _seen(client, answer) == seen, answer.text
    assert f"upstream {up.url}" in answer.text
    assert sessions(store) == {}


@pytest.mark.parametrize("client", ["chat", "anthropic", "responses"])
def test_retry_headers_pass_through(client: str) -> None:
    reply = whole(OPENAI_LIMITED, 429, retry_after="7", x_should_retry="true")
    upstream = "chat" if client != "anthropic" else "anthropic"
    if upstream == "anthropic":
        reply = whole(ANTHROPIC_LIMITED, 429, retry_after="7", x_should_retry="true")
    with HostileServer(lambda b: reply) as up, proxy_for(up, upstream) as proxy:
        answer = _ask(proxy, client)
    assert answer.status_code == 429
    assert answer.headers["retry-after"] == "7" and answer.headers["x-should-retry"] == "true"


def _events(text: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for block in text.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "data" in lines and lines["data"] != "[DONE]":
            out.append((lines.get("event", ""), json.loads(lines["data"])))
    return out


START = {"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 3}}}
TEXT = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
DELTA = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}}


def test_an_anthropic_overloaded_event_mid_stream_stays_overloaded(tmp_path: Path) -> None:
    reply = named(("message_start", START), ("content_block_start", TEXT),
                  ("content_block_delta", DELTA), ("error", ANTHROPIC_OVERLOADED))  # fmt: skip
    with HostileServer(lambda b: reply) as up, proxy_for(up, "anthropic", tmp_path / "s") as proxy:
        answer = _ask(proxy, "anthropic", stream=True)
    assert answer.status_code == 200
    name, error = _events(answer.text)[-1]
    assert name == "error" and error["error"]["type"] == "overloaded_error"
    assert '"type":"overloaded_error"' in json.dumps(error, separators=(",", ":"))  # Claude Code
    assert sessions(tmp_path / "s") == {}


def test_an_anthropic_overloaded_event_before_any_other_is_a_529(tmp_path: Path) -> None:
    reply = named(("error", ANTHROPIC_OVERLOADED))
    with HostileServer(lambda b: reply) as up, proxy_for(up, "anthropic") as proxy:
        answer = _ask(proxy, "anthropic", stream=True)
    assert _seen("anthropic", answer) == (529, "overloaded_error", None)


CREATED = {"type": "response.created", "response": {"id": "r", "output": []}}
TEXT_DELTA = {"type": "response.output_text.delta", "delta": "Hi"}


@pytest.mark.parametrize("code", ["server_is_overloaded", "rate_limit_exceeded"])
def test_a_failed_response_mid_stream_keeps_its_code_for_codex(tmp_path: Path, code: str) -> None:
    failed = {"type": "response.failed", "response": {"id": "r", "status": "failed",
              "error": {"code": code, "message": "try again in 2s"}}}  # fmt: skip
    reply = named(("response.created", CREATED), ("response.output_text.delta", TEXT_DELTA),
                  ("response.failed", failed))  # fmt: skip
    with HostileServer(lambda b: reply) as up, proxy_for(up, "responses", tmp_path / "s") as proxy:
        answer = _ask(proxy, "responses", stream=True)
    assert answer.status_code == 200
    got = _events(answer.text)
    (_, error), (name, last) = got[-2], got[-1]
    assert error["type"] == "error" and error["code"] == code
    assert name == "response.failed" and last["response"]["status"] == "failed"
    assert last["response"]["error"]["code"] == code
    assert sessions(tmp_path / "s") == {}


def test_an_overloaded_chat_stream_is_overloaded_for_every_client() -> None:
    choice = {"index": 0, "delta": {"content": "Hi"}, "finish_reason": None}
    chunk = {"id": "c", "object": "chat.completion.chunk", "choices": [choice]}
    body = [f"data: {json.dumps(d)}\n\n".encode() for d in (chunk, OPENAI_OVERLOADED)]
    reply = Raw(body, content_type="text/event-stream", length=False)
    with HostileServer(lambda b: reply) as up, proxy_for(up, "chat") as proxy:
        anthropic = _events(_ask(proxy, "anthropic", stream=True).text)[-1]
        responses = _events(_ask(proxy, "responses", stream=True).text)[-1]
        chat = _events(_ask(proxy, "chat", stream=True).text)[-1]
    assert anthropic[1]["error"]["type"] == "overloaded_error"
    assert responses[1]["response"]["error"]["code"] == "server_is_overloaded"
    assert chat[1]["error"]["code"] == "server_is_overloaded"
