"""Malformed upstream replies of every API, whole and streamed: each is a 502 (or, once a
stream has begun, an error event) in the client's API's shape naming the upstream, never a
500 with a traceback, and the turn is not stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests._hostile import HostileServer, Raw, events, named, whole
from tests._protocols import TOKEN, proxy_for, root, sessions

DEEP = '{"a": ' * 5000 + "1" + "}" * 5000
HUGE = "9" * 5000
LONE = '"\\ud800 lone"'  # JSON text of a string holding a lone surrogate

# -- Anthropic Messages

START = {
    "type": "message_start",
    "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                "content": [], "usage": {"input_tokens": 3, "output_tokens": 0}},
}  # fmt: skip
TEXT = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
STOP_BLOCK = {"type": "content_block_stop", "index": 0}
DELTA = {
    "type": "message_delta",
    "delta": {"stop_reason": "end_turn"},
    "usage": {"output_tokens": 2},
}
STOP = {"type": "message_stop"}


def _text(text: str) -> dict[str, Any]:
    return {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": text},
    }


def _anthropic(*middle: dict[str, Any] | str, start: dict[str, Any] | str = START) -> Raw:
    """A Messages stream: ``start``, a text block around ``middle``, the message's end."""
    data = [start, TEXT, _text("Hello"), *middle, STOP_BLOCK, DELTA, STOP]
    return named(*((_name(d), d) for d in data))


def _name(data: dict[str, Any] | str) -> str:
    if isinstance(data, str):  # the event's own JSON text, which may not decode
        return data.split('"type": "', 1)[1].split('"', 1)[0]
    return str(data["type"])


def _message(content: str) -> Raw:
    head = '{"id": "msg_1", "type": "message", "role": "assistant", "model": "m", '
    return whole(head + f'"content": {content}, "usage": {{"input_tokens": 3}}}}')


TOOL_START = {
    "type": "content_block_start",
    "index": 1,
    "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
}
NAN_INPUT = '{"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\\"x\\": NaN}"}}'  # noqa: E501
ANTHROPIC = {
    "message_start.message a string": _anthropic(start={"type": "message_start", "message": "m"}),
    "message_start.message.usage a string": _anthropic(
        start={**START, "message": {**START["message"], "usage": "many"}}
    ),
    "content_block_start.content_block a string": named(
        ("message_start", START),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": "x"}),
    ),
    "content_block_delta.delta a string": _anthropic(
        {"type": "content_block_delta", "index": 0, "delta": "more text"}
    ),
    "message_delta.delta a string": named(
        *(("x", d) for d in (START, TEXT, _text("Hi"), STOP_BLOCK)),
        ("message_delta", {"type": "message_delta", "delta": "end_turn"}),
        ("message_stop", STOP),
    ),
    "message_delta.usage a string": named(
        *(("x", d) for d in (START, TEXT, _text("Hi"), STOP_BLOCK)),
        ("message_delta", {**DELTA, "usage": "some"}),
        ("message_stop", STOP),
    ),
    "NaN in a tool_use input": _message(
        '[{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"x": NaN}}]'
    ),
    "NaN in a streamed tool_use input": named(
        ("message_start", START),
        ("content_block_start", TOOL_START),
        ("content_block_delta", NAN_INPUT),
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        ("message_delta", DELTA),
        ("message_stop", STOP),
    ),
    "a lone surrogate in the text": _message(f'[{{"type": "text", "text": {LONE}}}]'),
    "a lone surrogate in a text delta": _anthropic(
        '{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": '
        + LONE
        + "}}"
    ),
    "a reply nested 5,000 deep": _message(
        f'[{{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {DEEP}}}]'
    ),
    "a 5,000-digit integer in an event": _anthropic(
        '{"type": "message_delta", "delta": {"stop_reason": "end_turn"}, '
        f'"usage": {{"output_tokens": {HUGE}}}}}'
    ),
}

# -- OpenAI Responses

CREATED = {"type": "response.created", "response": {"id": "resp_1", "output": []}}


def _response(**fields: Any) -> dict[str, Any]:
    text = {"type": "output_text", "text": "Hello", "annotations": []}
    message = {"type": "message", "role": "assistant", "id": "msg_1", "content": [text]}
    return {"id": "resp_1", "object": "response", "status": "completed", "output": [message],
            "usage": {"input_tokens": 3, "output_tokens": 2}, **fields}  # fmt: skip


def _done(response: dict[str, Any] | str) -> Raw:
    text = response if isinstance(response, str) else json.dumps(response)
    completed = f'{{"type": "response.completed", "response": {text}}}'
    return named(("response.created", CREATED), ("response.completed", completed))


RESPONSES = {
    "usage.input_tokens_details a string": whole(
        _response(usage={"input_tokens": 3, "output_tokens": 1, "input_tokens_details": "x"})
    ),
    "incomplete_details a string": whole(
        _response(status="incomplete", incomplete_details="max_output_tokens")
    ),
    "response.failed a string": named(
        ("response.created", CREATED),
        ("response.failed", {"type": "response.failed", "response": "it failed"}),
    ),
    "a streamed usage.input_tokens_details a string": _done(
        _response(usage={"input_tokens": 3, "output_tokens": 1, "input_tokens_details": "x"})
    ),
    "a lone surrogate in the output text": whole(json.dumps(_response()).replace('"Hello"', LONE)),
    "a lone surrogate in a text delta": named(
        ("response.created", CREATED),
        (
            "response.output_text.delta",
            f'{{"type": "response.output_text.delta", "delta": {LONE}}}',
        ),
        ("response.completed", {"type": "response.completed", "response": _response()}),
    ),
    "a streamed response nested 5,000 deep": _done(
        json.dumps(_response(metadata="DEEP")).replace('"DEEP"', DEEP)
    ),
}

# -- OpenAI Chat Completions


def _chunk(delta: dict[str, Any] | str, finish: str | None = None) -> str:
    text = delta if isinstance(delta, str) else json.dumps(delta)
    choice = f'{{"index": 0, "delta": {text}, "finish_reason": {json.dumps(finish)}}}'
    return f'{{"id": "c", "object": "chat.completion.chunk", "choices": [{choice}]}}'


def _completion(message: str) -> Raw:
    choice = f'{{"index": 0, "message": {message}, "finish_reason": "stop"}}'
    return whole(f'{{"id": "c", "object": "chat.completion", "choices": [{choice}]}}')


CHAT = {
    "a lone surrogate in the content": _completion(f'{{"role": "assistant", "content": {LONE}}}'),
    "a lone surrogate in a content delta": events(
        _chunk({"role": "assistant", "content": "Hello"}),
        _chunk(f'{{"content": {LONE}}}'),
        _chunk({}, "stop"),
        "[DONE]",
    ),
    "NaN in tool-call arguments given as JSON": _completion(
        '{"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": '
        '"function", "function": {"name": "f", "arguments": {"x": NaN}}}]}'
    ),
    "a reply nested 5,000 deep": _completion(
        f'{{"role": "assistant", "content": "hi", "x": {DEEP}}}'
    ),
}

CASES = [
    *((api, name, raw) for api, cases in (("anthropic", ANTHROPIC), ("responses", RESPONSES),
                                        ("chat", CHAT)) for name, raw in cases.items()),
]  # fmt: skip


def _ask(proxy: Any, api: str, stream: bool) -> httpx.Response:
    token = {"x-contextfold-token": TOKEN}
    if api == "anthropic":
        body = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
        headers = {**token, "x-api-key": "sk-own", "anthropic-version": "2023-06-01"}
        url = f"{root(proxy)}/v1/messages"
    elif api == "responses":
        body, headers, url = {"model": "m", "input": "hi"}, token, f"{proxy.url}/responses"
    else:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        headers, url = token, f"{proxy.url}/chat/completions"
    return httpx.post(url, json={**body, "stream": stream}, headers=headers, timeout=30)


def _error(api: str, answer: httpx.Response) -> dict[str, Any]:
    """The error the client got: the body of a 502, or a stream's error event."""
    if answer.status_code != 200:
        assert answer.status_code == 502, answer.text
        return dict(answer.json())
    if api == "chat":
        last = [line for line in answer.text.splitlines() if line.startswith("data: {")][-1]
        return dict(json.loads(last[6:]))
    assert "event: error\n" in answer.text, answer.text
    return dict(json.loads(answer.text.split("event: error\ndata: ")[1].split("\n")[0]))


@pytest.mark.parametrize(("api", "name", "reply"), CASES, ids=[f"{a}: {n}" for a, n, _ in CASES])
def test_a_malformed_reply_is_a_502_in_the_clients_shape_and_stores_nothing(
    tmp_path: Path, api: str, name: str, reply: Raw
) -> None:
    store = tmp_path / "s.db"
    stream = reply.content_type == "text/event-stream"
    with HostileServer(lambda b: reply) as up, proxy_for(up, api, store) as proxy:
        answer = _ask(proxy, api, stream)
        failures = httpx.get(f"{root(proxy)}/metrics", headers={"x-contextfold-token": TOKEN})
    error = _error(api, answer)
    if api == "anthropic":
        assert error["type"] == "error" and error["error"]["type"] == "api_error", error
        message = error["error"]["message"]
    elif "error" in error and isinstance(error["error"], dict):
        assert error["error"]["type"] == "upstream_error", error
        message = error["error"]["message"]
    else:  # a Responses stream's error event
        assert error["type"] == "error", error
        message = error["message"]
    assert f"upstream {up.url}" in message, message
    assert "contextfold failed" not in message
    assert 'errors_total{kind="server_error"}' not in failures.text
    assert sessions(store) == {}


def test_tool_arguments_that_are_not_portable_json_reach_an_anthropic_client_as_text(
    tmp_path: Path,
) -> None:
    """A Chat Completions model's arguments are text; text that is not JSON the proxy can
    pass on (NaN, a lone surrogate's escape) is kept as text under ``arguments``, never
    parsed into a value no client can read."""
    store = tmp_path / "s.db"
    texts = ['{"x": NaN}', '{"x": "\\ud800"}']
    calls = [
        {"id": f"call_{i}", "type": "function", "function": {"name": "f", "arguments": text}}
        for i, text in enumerate(texts)
    ]
    whole = _completion(json.dumps({"role": "assistant", "content": None, "tool_calls": calls}))
    streamed = [{"index": i, **call} for i, call in enumerate(calls)]
    chunks = events(_chunk({"tool_calls": streamed}), _chunk({}, "tool_calls"), "[DONE]")

    def reply(body: dict[str, Any]) -> Raw:
        return chunks if body.get("stream") else whole

    with HostileServer(reply) as up, proxy_for(up, "chat", store) as proxy:
        for stream in (False, True):
            answer = _ask(proxy, "anthropic", stream)
            assert answer.status_code == 200, answer.text
            if not stream:
                inputs = [b["input"] for b in answer.json()["content"]]
                assert inputs == [{"arguments": t} for t in texts]
            else:
                assert "event: error" not in answer.text
                assert '{\\"arguments\\": \\"{\\\\\\"x\\\\\\": NaN}\\"}' in answer.text
