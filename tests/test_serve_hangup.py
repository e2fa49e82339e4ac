"""A client that hangs up before its reply is whole, in every API, whole and streamed: the
upstream call is let go at once (the session is free again while the upstream still works on
it), nothing of the turn is stored, and the client's retry continues the same session. Every
API's stream opens with an event before the reply is whole (Chat's role chunk), so a client
that hangs up after it leaves nothing either; one that hangs up before its body was read is
logged as its hang-up, in one line."""

from __future__ import annotations

import logging
import socket
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests._protocols import (
    CLIENT_KEY,
    TOKEN,
    anthropic_client,
    openai_client,
    proxy_for,
    sessions,
)
from tests._rounds import API_STREAMS, Conversation, answered, upstream
from tests._serve import idle

HEADERS = {
    "X-Contextfold-Token": TOKEN,
    "Authorization": f"Bearer {CLIENT_KEY}",
    "x-api-key": CLIENT_KEY,
    "anthropic-version": "2023-06-01",
}
PATHS = {"chat": "/chat/completions", "anthropic": "/messages", "responses": "/responses"}


class Gate:
    """An upstream script whose requests after the first ``free`` wait until opened: the
    second turn's restore round is answered, its next call waits."""

    def __init__(self, free: int) -> None:
        self.free = free
        self.seen = 0
        self.opened = threading.Event()
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any], api: str) -> list[tuple[str, ...]]:
        with self.lock:
            self.seen += 1
            seen = self.seen
        if seen > self.free:
            assert self.opened.wait(timeout=60), "the gate was never opened"
        if answered(api, body):
            return [("text", "All steps done.")]
        if seen == 1:
            return [("text", "Started.")]
        return [("text", "Looking."), ("call", "restore", '{"step": 0}')]


def _body(api: str, history: list[dict[str, Any]], stream: bool) -> dict[str, Any]:
    key = "input" if api == "responses" else "messages"
    body: dict[str, Any] = {"model": "m", key: history, "stream": stream}
    if api == "anthropic":
        body["max_tokens"] = 64
    if api == "responses":
        body["store"] = False
    return body


def _hang_up(url: str, body: dict[str, Any], stream: bool) -> None:
    """Send ``body``; hang up at the first event of a stream, or before a whole reply."""
    try:
        if not stream:
            httpx.post(url, json=body, headers=HEADERS, timeout=0.5)
            raise AssertionError("the reply came although the upstream was held")
        with httpx.stream("POST", url, json=body, headers=HEADERS, timeout=5) as response:
            assert response.status_code == 200
            for line in response.iter_lines():
                if line.startswith("data:"):
                    return  # the first event: hang up
    except httpx.ReadTimeout:
        return


@pytest.mark.parametrize(("api", "stream"), API_STREAMS)
def test_a_client_that_hangs_up_leaves_nothing_and_its_retry_goes_on(
    tmp_path: Path, api: str, stream: bool
) -> None:
    store = tmp_path / "s.db"
    gate = Gate(free=2 if stream else 1)  # streamed: its restore round answered, then held
    up = upstream(api, lambda body: gate(body, api))
    with up, proxy_for(up, api, store, strategy="refold") as proxy:
        talk = Conversation(proxy, api, stream)
        talk.say("Start the task.")
        assert talk.ask().text == "Started."
        talk.say("Restore what you cut.")
        before = sessions(store)
        _hang_up(f"{proxy.url}{PATHS[api]}", _body(api, talk.history, stream), stream)
        idle(proxy)  # the session is let go while the upstream still holds the call
        assert sessions(store) == before  # nothing of the turn stored
        gate.opened.set()
        assert talk.ask().text.endswith("All steps done.")
    (steps,) = sessions(store).values()  # the retry continued the session: no branch
    assert len(steps) == 3


LINE = "A reply of one line, held whole until it ends. " * 4
"""A reply the strategy's marker filter holds back whole (no line ends before its end)."""


def _slow(api: str) -> Any:
    from contextfold.testing.upstreams.anthropic import ScriptedAnthropic
    from contextfold.testing.upstreams.chat import ScriptedServer
    from contextfold.testing.upstreams.responses import ScriptedResponses, message

    if api == "chat":
        return ScriptedServer(lambda b: {"role": "assistant", "content": LINE}, chunk_delay=0.1)
    if api == "anthropic":
        return ScriptedAnthropic(lambda b: LINE, chunk_delay=0.1)
    return ScriptedResponses(lambda b: [message(LINE)], chunk_delay=0.1)


def _first_event_then_hang_up(proxy: Any, api: str) -> None:
    """Ask through the API's official SDK, streamed; close the stream at its first event."""
    said: Any = [{"role": "user", "content": "Start the task."}]
    if api == "chat":
        stream: Any = openai_client(proxy).chat.completions.create(
            model="m", messages=said, stream=True
        )
    elif api == "anthropic":
        stream = anthropic_client(proxy).messages.create(
            model="m", max_tokens=200, messages=said, stream=True
        )
    else:
        stream = openai_client(proxy).responses.create(
            model="m", input="Start the task.", stream=True, store=False
        )
    next(iter(stream))
    stream.close()


@pytest.mark.parametrize("api", ["chat", "anthropic", "responses"])
def test_a_client_that_hangs_up_at_its_first_event_has_nothing_stored(
    tmp_path: Path, api: str
) -> None:
    store = tmp_path / "s.db"
    with _slow(api) as up, proxy_for(up, api, store, strategy="refold") as proxy:
        _first_event_then_hang_up(proxy, api)
        idle(proxy)  # the turn let go: the upstream was still streaming its one line
    assert sessions(store) == {}


ROUTES = ["/v1/chat/completions", "/v1/messages", "/v1/responses",
          "/v1beta/models/gemini-test:generateContent"]  # fmt: skip


@pytest.mark.parametrize("path", ROUTES)
def test_a_client_that_hangs_up_mid_body_is_logged_as_its_hang_up(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, path: str
) -> None:
    from contextfold.testing.upstreams.chat import ScriptedServer

    with ScriptedServer() as up, proxy_for(up, "chat", tmp_path / "s.db") as proxy:
        url = httpx.URL(proxy.url)
        head = (f"POST {path} HTTP/1.1\r\nHost: {url.host}\r\nContent-Type: application/json\r\n"
                f"Content-Length: 10000\r\nX-Contextfold-Token: {TOKEN}\r\n\r\n")  # fmt: skip
        with caplog.at_level(logging.INFO), socket.create_connection((url.host, url.port)) as sock:
            sock.sendall(head.encode() + b'{"model": "m", "messages": [{"role": "us')
            time.sleep(0.3)  # the body is being read when the client goes
        deadline = time.monotonic() + 10
        while not _ours(caplog) and time.monotonic() < deadline:
            time.sleep(0.05)
    (record,) = _ours(caplog)
    assert "the client hung up before its request was whole" in record.getMessage()
    assert path in record.getMessage() and record.exc_info is None
    assert up.requests == [] and sessions(tmp_path / "s.db") == {}


def _ours(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("contextfold")]
