"""Two proxy replicas on one PostgreSQL store: requests of one conversation alternate between
them (real ``contextfold serve`` processes), nothing duplicated or lost; a race on one session
is decided by the database and the loser's turn becomes a branch."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from contextfold.core.counters import resolve_counter
from contextfold.core.store import PostgresStore
from contextfold.serve.sessions.conversation import parse_conversation
from contextfold.serve.sessions.sessions import SessionManager
from contextfold.strategies.registry import build_strategy
from contextfold.testing.postgres import TempPostgres
from contextfold.testing.upstreams.chat import ScriptedServer
from tests._serve import TOKEN, canonical, stored

OPENING = [
    {"role": "system", "content": "You are a helpful agent."},
    {"role": "user", "content": "Start the task."},
]


def echo_all(body: dict[str, Any]) -> dict[str, Any]:
    users = [m["content"] for m in body["messages"] if m["role"] == "user"]
    return {"role": "assistant", "content": " | ".join(users)}


@contextmanager
def replica(upstream: str, store: str) -> Iterator[str]:
    """``contextfold serve`` in a process of its own; yields its base URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = [
        sys.executable,
        "-c",
        "from contextfold.cli import app; app()",
        "serve",
        "--upstream",
        upstream,
        "--store",
        store,
        "--strategy",
        "full",
        "--port",
        str(port),
        "--token",
        TOKEN,
    ]
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, f"replica exited: {proc.stderr and proc.stderr.read()}"
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "replica did not start"
            time.sleep(0.1)
        yield f"{url}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        if proc.stderr:
            proc.stderr.close()


def ask(base: str, messages: list[dict[str, Any]]) -> str:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    body = {"model": "m", "messages": messages}
    response = httpx.post(f"{base}/chat/completions", json=body, headers=headers, timeout=60)
    response.raise_for_status()
    content: str = response.json()["choices"][0]["message"]["content"]
    return content


def test_conversations_alternating_between_two_replicas(postgres: TempPostgres) -> None:
    url = postgres.new_database()
    finals: dict[str, list[dict[str, Any]]] = {}
    with ScriptedServer(echo_all) as up, replica(up.url, url) as a, replica(up.url, url) as b:
        replicas = [a, b]
        conversations = {
            f"c{n}": [OPENING[0], {"role": "user", "content": f"Start task {n}."}] for n in range(3)
        }
        for turn in range(6):
            for n, (name, messages) in enumerate(conversations.items()):
                base = replicas[(turn + n) % 2]  # each request goes to the other replica
                reply = ask(base, messages)
                assert reply == " | ".join(m["content"] for m in messages if m["role"] == "user")
                finals[name] = list(messages)  # the store keeps what the request sent
                messages += [
                    {"role": "assistant", "content": reply},
                    {"role": "user", "content": f"{name} {turn}"},
                ]
        assert len(up.requests) == 18
    sessions = stored(url)
    assert sorted(map(repr, sessions.values())) == sorted(
        repr(canonical(m)) for m in finals.values()
    )  # one session per conversation: nothing duplicated, nothing lost
    with PostgresStore(url) as store:
        for sid in store.list_sessions():
            assert store.load_session(sid).meta["serve"]["parent"] is None
            assert len(store.load_calls(sid)) == 6


def pg_manager(url: str) -> SessionManager:
    return SessionManager(
        PostgresStore(url), lambda: build_strategy("full"), resolve_counter("approx")
    )


def test_a_race_on_one_session_is_decided_by_the_database(postgres: TempPostgres) -> None:
    """Both replicas take the same stored session as free; the first commit wins it, the
    other turn is written whole as a branch of it (its calls included); nothing altered."""
    url = postgres.new_database()
    one, two = pg_manager(url), pg_manager(url)
    one.commit(one.begin(parse_conversation(OPENING, ""), ""))
    base = [*OPENING, {"role": "assistant", "content": "hello"}]
    want = {side: [*base, {"role": "user", "content": f"from {side}"}] for side in ("a", "b")}
    turn_a = one.begin(parse_conversation(want["a"], ""), "")
    turn_b = two.begin(parse_conversation(want["b"], ""), "")
    assert not turn_a.created and not turn_b.created  # both continue the stored session
    assert turn_a.session.id == turn_b.session.id
    one.record_call(turn_a, list(turn_a.view.messages), {"prompt_tokens": 1})
    two.record_call(turn_b, list(turn_b.view.messages), {"prompt_tokens": 2})
    one.commit(turn_a)
    two.commit(turn_b)  # loses the race: becomes a branch
    sessions = stored(url)
    assert sorted(map(repr, sessions.values())) == sorted(repr(canonical(m)) for m in want.values())
    branch = next(sid for sid, msgs in sessions.items() if msgs == canonical(want["b"]))
    with PostgresStore(url) as store:
        assert store.load_session(branch).meta["serve"] == {
            "family": "",
            "parent": turn_a.session.id,
            "fork_at": 2,  # both sent the reply "hello": the steps it shares with a's session
            "arm": "treated",
            "unit": turn_a.session.id,  # the conversation's, as a branch of it
        }
        assert [c["usage"] for c in store.load_calls(branch)] == [{"prompt_tokens": 2}]
        assert [c["usage"] for c in store.load_calls(turn_a.session.id)] == [{"prompt_tokens": 1}]
    assert two.sync() == 0  # the loser already reopened both
    more = [*want["a"], {"role": "assistant", "content": "x"}, {"role": "user", "content": "y"}]
    later = two.begin(parse_conversation(more, ""), "")
    assert later.session.id == turn_a.session.id and not later.created  # sees a's steps


@pytest.mark.parametrize("rounds", [4])
def test_simultaneous_requests_on_two_replicas_lose_nothing(
    postgres: TempPostgres, rounds: int
) -> None:
    url = postgres.new_database()
    expected: list[list[dict[str, Any]]] = []
    with ScriptedServer(echo_all) as up, replica(up.url, url) as a, replica(up.url, url) as b:
        for r in range(rounds):
            base = [*OPENING, {"role": "user", "content": f"round {r}"}]
            reply = ask(a, base)
            base.append({"role": "assistant", "content": reply})
            start = threading.Barrier(2)
            outs: dict[str, list[dict[str, Any]]] = {}

            def go(
                side: str,
                where: str,
                base: list[dict[str, Any]] = base,
                start: threading.Barrier = start,
                outs: dict[str, list[dict[str, Any]]] = outs,
            ) -> None:
                messages = [*base, {"role": "user", "content": side}]
                start.wait()
                answer = ask(where, messages)
                assert answer.endswith(side)
                outs[side] = messages

            threads = [threading.Thread(target=go, args=x) for x in (("x", a), ("y", b))]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=60)
            expected += [canonical(outs["x"]), canonical(outs["y"])]
    sessions = stored(url)
    assert sorted(map(repr, sessions.values())) == sorted(map(repr, expected))
