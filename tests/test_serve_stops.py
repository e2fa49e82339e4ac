"""Why a reply ended reaches every client in its API's words, whole and streamed: an upstream's
length limit, content filter or refusal is never a normal completion, and a reason only one
API has comes back to its clients as it was (one table per API: ``apis/<api>/_stops.py``), and
to other clients in their words (never a word their API does not have)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from google import genai
from google.genai import types

from tests._hostile import HostileServer, Raw, events, named, whole
from tests._protocols import TOKEN, anthropic_client, openai_client, proxy_for, root


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


def _gemini_upstream(reason: str, stream: bool) -> Any:
    candidate = {"content": {"role": "model", "parts": [{"text": "Part"}]},
                 "finishReason": reason, "index": 0}  # fmt: skip
    data = {"candidates": [candidate], "usageMetadata": {"promptTokenCount": 3}}
    if not stream:
        return lambda body: whole(data)
    head = {"candidates": [{**candidate, "finishReason": None}]}
    chunks = [f"data: {json.dumps(c)}\r\n\r\n".encode() for c in (head, data)]
    return lambda body: Raw(chunks, content_type="text/event-stream", length=False)


def _gemini_ended(proxy: Any, stream: bool) -> str | None:
    options = types.HttpOptions(base_url=root(proxy), headers={"X-Contextfold-Token": TOKEN},
                                retry_options=types.HttpRetryOptions(attempts=1))  # fmt: skip
    client = genai.Client(api_key="gm-own", http_options=options)
    if not stream:
        reply = client.models.generate_content(model="gemini-test", contents="hi")
        return reply.candidates[0].finish_reason if reply.candidates else None
    chunks = list(client.models.generate_content_stream(model="gemini-test", contents="hi"))
    return chunks[-1].candidates[0].finish_reason if chunks[-1].candidates else None


GEMINI_OWN = ["RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY",
              "MALFORMED_FUNCTION_CALL", "MAX_TOKENS", "SAFETY"]  # fmt: skip


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("reason", GEMINI_OWN)
def test_a_gemini_finish_reason_comes_back_as_it_was(reason: str, stream: bool) -> None:
    upstream = _gemini_upstream(reason, stream)
    with HostileServer(upstream) as up, proxy_for(up, "gemini") as proxy:
        assert _gemini_ended(proxy, stream) == reason


def _sdk_ended(proxy: Any, api: str, stream: bool) -> Any:
    """How an official SDK's client was told the reply ended."""
    said = [{"role": "user", "content": "hi"}]
    if api == "chat":
        chat = openai_client(proxy).chat.completions
        if not stream:
            return chat.create(model="m", messages=said).choices[0].finish_reason  # type: ignore[arg-type]
        chunks = list(chat.create(model="m", messages=said, stream=True))  # type: ignore[arg-type]
        return [c.choices[0].finish_reason for c in chunks if c.choices][-1]
    if api == "anthropic":
        messages = anthropic_client(proxy).messages
        if not stream:
            return messages.create(model="m", max_tokens=8, messages=said).stop_reason  # type: ignore[arg-type]
        with messages.stream(model="m", max_tokens=8, messages=said) as events:  # type: ignore[arg-type]
            return events.get_final_message().stop_reason
    responses = openai_client(proxy).responses
    if not stream:
        done = responses.create(model="m", input="hi")
    else:
        events = list(responses.create(model="m", input="hi", stream=True))
        done = events[-1].response  # type: ignore[union-attr]
    details = done.incomplete_details
    return done.status, details.reason if details else None


GEMINI_TO = [
    ("RECITATION", {"chat": "content_filter", "anthropic": "refusal",
                    "responses": ("incomplete", "content_filter")}),
    ("MALFORMED_FUNCTION_CALL", {"chat": "stop", "anthropic": "end_turn",
                                 "responses": ("completed", None)}),
    ("MAX_TOKENS", {"chat": "length", "anthropic": "max_tokens",
                    "responses": ("incomplete", "max_output_tokens")}),
]  # fmt: skip


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("client", ["chat", "anthropic", "responses"])
@pytest.mark.parametrize(("reason", "expected"), GEMINI_TO, ids=[r for r, _ in GEMINI_TO])
def test_a_gemini_finish_reason_reaches_other_clients_in_their_words(
    reason: str, expected: dict[str, Any], client: str, stream: bool
) -> None:
    upstream = _gemini_upstream(reason, stream)
    with HostileServer(upstream) as up, proxy_for(up, "gemini", upstream_key="gm-own") as proxy:
        assert _sdk_ended(proxy, client, stream) == expected[client]
