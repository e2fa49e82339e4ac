"""Broken and hostile upstreams behind contextfold serve: each is reported to the client (a
502 naming what the upstream got wrong, or an error event once a stream has begun) and the
request commits nothing; hostile ``restore`` arguments are answered to the model as an error
text; a model that never stops calling ``restore`` never shows it to the client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from contextfold.testing.upstreams.chat import ScriptedServer, echo_reply
from tests._hostile import HostileServer, Raw, completion, events
from tests._serve import TOKEN, canonical, serving, stored, tool_call

AUTH = {"Authorization": f"Bearer {TOKEN}"}
OPENING = [{"role": "user", "content": "hello"}]
LATER = [*OPENING, {"role": "assistant", "content": "hi"}, {"role": "user", "content": "go"}]
HEAD = {"id": "c", "object": "chat.completion.chunk", "model": "m"}


def _chunk(delta: Any, finish: str | None = None) -> dict[str, Any]:
    return {**HEAD, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def _post(proxy: Any, messages: list[dict[str, Any]], **body: Any) -> httpx.Response:
    payload = {"model": "m", "messages": messages, **body}
    return httpx.post(f"{proxy.url}/chat/completions", json=payload, headers=AUTH, timeout=30)


def _first_good_then(bad: Raw) -> Any:
    """The first request is answered well (a session to keep), every later one with ``bad``."""

    def reply(body: dict[str, Any]) -> Raw:
        if len(body["messages"]) == 1:
            message = {"role": "assistant", "content": "hi"}
            if body.get("stream"):
                return events(_chunk(message), _chunk({}, "stop"), "[DONE]")
            return completion(message)
        return bad

    return reply


STREAMS_BEFORE_HEADERS = {
    "whole-json": completion({"role": "assistant", "content": "a whole reply"}),
    "html": Raw([b"<html><body>502 Bad Gateway</body></html>"], content_type="text/html"),
    "nothing-but-done": events("[DONE]"),
    "delta-a-string": events(_chunk("hello"), _chunk({}, "stop"), "[DONE]"),
    "index-a-letter": events(
        _chunk({"tool_calls": [{"index": "a", "id": "x", "function": {"name": "f"}}]}), "[DONE]"
    ),
    "choices-an-object": events({**HEAD, "choices": {"0": {}}}, "[DONE]"),
}
STREAMS_BROKEN_LATER = {
    "no-choices": events({**HEAD, "choices": []}, {**HEAD, "choices": []}, "[DONE]"),
    "closed-before-done": events(_chunk({"content": "half a"}), _chunk({"content": " reply"})),
    "finish-then-closed": events(_chunk({"content": "all"}), _chunk({}, "stop")),
    "delta-a-string-later": events(_chunk({"content": "ok"}), _chunk("more"), "[DONE]"),
    "index-a-letter-later": events(
        _chunk({"content": "ok"}),
        _chunk({"tool_calls": [{"index": "a", "id": "x", "function": {"name": "f"}}]}),
        _chunk({}, "tool_calls"),
        "[DONE]",
    ),
    "arguments-a-number": events(
        _chunk({"content": "ok"}),
        _chunk(
            {"tool_calls": [{"index": 0, "id": "x", "function": {"name": "f", "arguments": 5}}]}
        ),
        _chunk({}, "tool_calls"),
        "[DONE]",
    ),
}


@pytest.mark.parametrize("case", sorted(STREAMS_BEFORE_HEADERS))
def test_a_broken_stream_before_any_chunk_is_a_502_and_commits_nothing(
    tmp_path: Path, case: str
) -> None:
    db = tmp_path / "s.db"
    up = HostileServer(_first_good_then(STREAMS_BEFORE_HEADERS[case]))
    with up, serving(up, db, strategy="full") as proxy:  # type: ignore[arg-type]
        assert _post(proxy, OPENING).status_code == 200
        reply = _post(proxy, LATER, stream=True)
        assert reply.status_code == 502, reply.text
        error = reply.json()["error"]
        assert error["type"] == "upstream_error" and up.url in error["message"]
    assert list(stored(db).values()) == [canonical(OPENING)]


@pytest.mark.parametrize("case", sorted(STREAMS_BROKEN_LATER))
def test_a_stream_broken_after_it_began_ends_with_an_error_event_and_commits_nothing(
    tmp_path: Path, case: str
) -> None:
    db = tmp_path / "s.db"
    up = HostileServer(_first_good_then(STREAMS_BROKEN_LATER[case]))
    with up, serving(up, db, strategy="full") as proxy:  # type: ignore[arg-type]
        assert _post(proxy, OPENING).status_code == 200
        body = {"model": "m", "messages": LATER, "stream": True}
        url = f"{proxy.url}/chat/completions"
        with httpx.stream("POST", url, json=body, headers=AUTH, timeout=30) as response:
            assert response.status_code == 200
            data = [line[6:] for line in response.iter_lines() if line.startswith("data: ")]
        assert "[DONE]" not in data
        last = json.loads(data[-1])
        assert last["error"]["type"] == "upstream_error" and up.url in last["error"]["message"]
        assert not any(json.loads(d).get("choices", [{}])[0].get("finish_reason") for d in data)
    assert list(stored(db).values()) == [canonical(OPENING)]


RESTORE_CALL = {"id": "r1", "type": "function", "function": {"name": "restore", "arguments": "{}"}}
REPLIES = {
    "usage-a-string": (
        completion({"role": "assistant", "content": "x"}, usage={"prompt_tokens": "abc"}),
        "usage.prompt_tokens",
    ),
    "tool_calls-an-object": (
        completion({"role": "assistant", "content": None, "tool_calls": {"id": "a"}}),
        "tool_calls",
    ),
    "restore-without-id": (
        completion(
            {"role": "assistant", "tool_calls": [{"function": {"name": "restore"}, "type": "x"}]}
        ),
        "tool_calls[0].id",
    ),
    "no-choices": (completion({}, choices=[]), "choices[0].message"),
    "content-a-number": (completion({"role": "assistant", "content": 7}), "content"),
}


@pytest.mark.parametrize("case", sorted(REPLIES))
def test_a_malformed_reply_is_a_502_naming_what_the_upstream_got_wrong(
    tmp_path: Path, case: str
) -> None:
    db = tmp_path / "s.db"
    bad, field = REPLIES[case]
    with HostileServer(_first_good_then(bad)) as up, serving(up, db, strategy="refold") as proxy:  # type: ignore[arg-type]
        assert _post(proxy, OPENING).status_code == 200
        reply = _post(proxy, LATER)
        assert reply.status_code == 502, reply.text
        message = reply.json()["error"]["message"]
        assert field in message and up.url in message
    assert list(stored(db).values()) == [canonical(OPENING)]


def _restore_with(arguments: Any) -> Any:
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        last = body["messages"][-1]
        if last["role"] == "tool":
            return {"role": "assistant", "content": f"the tool said: {last['content'][:80]}"}
        if last["content"] == "restore it":
            call = {"id": "r1", "type": "function", "function": {"name": "restore"}}
            streamed = body.get("stream") and not isinstance(arguments, str)  # text, streamed
            call["function"]["arguments"] = json.dumps(arguments) if streamed else arguments
            return {"role": "assistant", "content": None, "tool_calls": [call]}
        return echo_reply(body)

    return reply


@pytest.mark.parametrize(
    ("arguments", "answer"),
    [
        ('{"step": "²"}', "error"),
        ('{"step": "' + "9" * 5000 + '"}', "error"),
        ('{"step": ' + "9" * 5000 + "}", "error"),
        ('{"step": ' + "[" * 5000 + "]" * 5000 + "}", "error"),
        ("[" * 5000 + "]" * 5000, "error"),
        ('{"step": NaN}', "error"),
        ({"step": 0}, "hello"),  # arguments as an object: accepted, step 0 restored
    ],
    ids=["superscript", "digits-string", "digits", "nested", "nested-top", "nan", "object"],
)
@pytest.mark.parametrize("stream", [False, True])
def test_hostile_restore_arguments_are_answered_with_an_error_text(
    tmp_path: Path, arguments: Any, answer: str, stream: bool
) -> None:
    db = tmp_path / "s.db"
    messages = [*LATER[:2], {"role": "user", "content": "restore it"}]
    with (
        ScriptedServer(_restore_with(arguments)) as up,
        serving(up, db, strategy="refold") as proxy,
    ):
        reply = _post(proxy, messages, stream=stream, max_tokens=100)
        assert reply.status_code == 200, reply.text
        text = _text(reply, stream)
        assert text.startswith("the tool said: ") and answer in text, text
        assert up.requests[1][1]["messages"][-1]["role"] == "tool"
    assert list(stored(db).values()) == [canonical(messages)]


def _always_restore(body: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [tool_call("r", "restore", step=0)]}


@pytest.mark.parametrize("stream", [False, True])
def test_a_model_that_always_calls_restore_never_shows_it_to_the_client(
    tmp_path: Path, stream: bool
) -> None:
    db = tmp_path / "s.db"
    with ScriptedServer(_always_restore) as up, serving(up, db, strategy="refold") as proxy:
        reply = _post(proxy, LATER, stream=stream)
        assert reply.status_code == 200, reply.text
        assert "restore" not in _tool_names(reply, stream)
        assert "restore" in _text(reply, stream)  # the client is told why there is no answer
        assert _finish(reply, stream) == "stop"
        assert len(up.requests) == 4  # max_rounds
        assert "tools" not in up.requests[-1][1]  # the last call offered no strategy tool
    assert list(stored(db).values()) == [canonical(LATER)]


def _data(reply: httpx.Response) -> list[dict[str, Any]]:
    lines = [line[6:] for line in reply.text.splitlines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]", lines[-1]
    return [json.loads(line) for line in lines[:-1]]


def _text(reply: httpx.Response, stream: bool) -> str:
    if not stream:
        return str(reply.json()["choices"][0]["message"]["content"] or "")
    return "".join(
        c["choices"][0]["delta"].get("content") or "" for c in _data(reply) if c["choices"]
    )


def _tool_names(reply: httpx.Response, stream: bool) -> list[str]:
    if not stream:
        calls = reply.json()["choices"][0]["message"].get("tool_calls") or []
    else:
        calls = [
            call
            for c in _data(reply)
            if c["choices"]
            for call in c["choices"][0]["delta"].get("tool_calls") or []
        ]
    return [c["function"]["name"] for c in calls]


def _finish(reply: httpx.Response, stream: bool) -> str | None:
    if not stream:
        return str(reply.json()["choices"][0]["finish_reason"])
    finishes = [c["choices"][0]["finish_reason"] for c in _data(reply) if c["choices"]]
    return next((f for f in finishes if f), None)
