"""Why a reply ended reaches every client in its API's words, whole and streamed: an upstream's
length limit, content filter or refusal is never a normal completion, and a reason only one
API has comes back to its clients as it was (:mod:`contextfold.serve.stops`)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests._hostile import HostileServer, Raw, events, named, whole
from tests._protocols import TOKEN, proxy_for, root


def _chat_upstream(reason: str) -> Any:
    def reply(body: dict[str, Any]) -> Raw:
        if body.get("stream"):
            head = {"id": "c", "object": "chat.completion.chunk"}
            text = {**head, "choices": [{"index": 0, "delta": {"content": "Part"}}]}
            end = {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}
            return events(text, end, "[DONE]")
        message = {"role": "assistant", "content": "Part"}
        choice = {"index": 0, "message": message, "finish_reason": reason}
        return whole({"id": "c", "object": "chat.completion", "choices": [choice]})

    return reply


def _anthropic_upstream(reason: str) -> Any:
    def reply(body: dict[str, Any]) -> Raw:
        message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                   "content": [{"type": "text", "text": "Part"}], "stop_reason": reason,
                   "usage": {"input_tokens": 3, "output_tokens": 1}}  # fmt: skip
        if not body.get("stream"):
            return whole(message)
        start = {**message, "content": [], "stop_reason": None}
        delta = {"type": "text_delta", "text": "Part"}
        data = [
            {"type": "message_start", "message": start},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
            {"type": "content_block_delta", "index": 0, "delta": delta},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": reason}},
            {"type": "message_stop"},
        ]  # fmt: skip
        return named(*((d["type"], d) for d in data))

    return reply


def _responses_upstream(status: str, reason: str | None) -> Any:
    def reply(body: dict[str, Any]) -> Raw:
        text = {"type": "output_text", "text": "Part", "annotations": []}
        item = {"type": "message", "id": "msg_1", "role": "assistant", "content": [text]}
        details = {"reason": reason} if reason else None
        usage = {"input_tokens": 3, "output_tokens": 1}
        response = {"id": "resp_1", "object": "response", "status": status, "output": [item],
                    "incomplete_details": details, "usage": usage}  # fmt: skip
        if not body.get("stream"):
            return whole(response)
        started = {**response, "status": "in_progress", "output": []}
        delta = {"type": "response.output_text.delta", "delta": "Part"}
        last = f"response.{status}"
        return named(
            ("response.created", {"type": "response.created", "response": started}),
            ("response.output_text.delta", delta),
            (last, {"type": last, "response": response}),
        )

    return reply


def _ask(proxy: Any, api: str, stream: bool) -> httpx.Response:
    token = {"x-contextfold-token": TOKEN}
    if api == "anthropic":
        body: dict[str, Any] = {"model": "m", "max_tokens": 8}
        body["messages"] = [{"role": "user", "content": "hi"}]
        headers, url = {**token, "x-api-key": "sk-own"}, f"{root(proxy)}/v1/messages"
    elif api == "responses":
        body, headers, url = {"model": "m", "input": "hi"}, token, f"{proxy.url}/responses"
    else:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        headers, url = token, f"{proxy.url}/chat/completions"
    answer = httpx.post(url, json={**body, "stream": stream}, headers=headers, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer


def _events(text: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for block in text.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "data" in lines and lines["data"] != "[DONE]":
            out.append((lines.get("event", ""), json.loads(lines["data"])))
    return out


def _ended(api: str, answer: httpx.Response, stream: bool) -> Any:
    """How the client was told the reply ended: a stop or finish reason, or a Responses
    status with its incomplete details (and, streamed, the name of the last event)."""
    if not stream:
        data = answer.json()
        if api == "anthropic":
            return data["stop_reason"]
        if api == "chat":
            return data["choices"][0]["finish_reason"]
        return data["status"], data["incomplete_details"], None
    got = _events(answer.text)
    if api == "anthropic":
        return next(d["delta"]["stop_reason"] for n, d in got if n == "message_delta")
    if api == "chat":
        return [c["choices"][0]["finish_reason"] for _, c in got if c.get("choices")][-1]
    name, last = got[-1]
    return last["response"]["status"], last["response"]["incomplete_details"], name


MAX = {"reason": "max_output_tokens"}
FILTER = {"reason": "content_filter"}
CHAT = [
    ("stop", {"chat": "stop", "anthropic": "end_turn", "responses": ("completed", None)}),
    ("length", {"chat": "length", "anthropic": "max_tokens", "responses": ("incomplete", MAX)}),
    (
        "content_filter",
        {"chat": "content_filter", "anthropic": "refusal", "responses": ("incomplete", FILTER)},
    ),
]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("client", ["chat", "anthropic", "responses"])
@pytest.mark.parametrize(("reason", "expected"), CHAT, ids=[r for r, _ in CHAT])
def test_a_chat_upstreams_finish_reason_reaches_every_client(
    reason: str, expected: dict[str, Any], client: str, stream: bool
) -> None:
    with HostileServer(_chat_upstream(reason)) as up, proxy_for(up, "chat") as proxy:
        got = _ended(client, _ask(proxy, client, stream), stream)
    want = expected[client]
    if client == "responses":
        status = want[0]
        want = (*want, f"response.{status}" if stream else None)
    assert got == want


ANTHROPIC = ["end_turn", "max_tokens", "stop_sequence", "pause_turn", "refusal",
             "model_context_window_exceeded"]  # fmt: skip


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("reason", ANTHROPIC)
def test_an_anthropic_stop_reason_comes_back_as_it_was(reason: str, stream: bool) -> None:
    with HostileServer(_anthropic_upstream(reason)) as up, proxy_for(up, "anthropic") as proxy:
        assert _ended("anthropic", _ask(proxy, "anthropic", stream), stream) == reason


RESPONSES = [
    ("completed", None),
    ("incomplete", "max_output_tokens"),
    ("incomplete", "content_filter"),
]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(("status", "reason"), RESPONSES)
def test_a_responses_status_comes_back_as_it_was(
    status: str, reason: str | None, stream: bool
) -> None:
    upstream = _responses_upstream(status, reason)
    with HostileServer(upstream) as up, proxy_for(up, "responses") as proxy:
        got = _ended("responses", _ask(proxy, "responses", stream), stream)
    details = {"reason": reason} if reason else None
    assert got == (status, details, f"response.{status}" if stream else None)
