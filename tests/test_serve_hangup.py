"""A client that hangs up before its reply is whole, in every API, whole and streamed: the
upstream call is let go at once (the session is free again while the upstream still works on
it), nothing of the turn is stored, and the client's retry continues the same session."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests._protocols import CLIENT_KEY, TOKEN, proxy_for, sessions
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
