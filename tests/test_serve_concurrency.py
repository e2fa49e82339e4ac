"""Sessions of contextfold serve side by side: a fold in progress holds up no other session;
identical concurrent requests for one conversation store it once; a failed request's steps
stay in memory, unwritten, for the retry, or are put back from memory for a request that
does not hold them (nothing read back from the store either way).
Real HTTP on 127.0.0.1: the proxy, a scripted upstream, and a scripted folder server."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from contextfold.core.counters import resolve_counter
from contextfold.core.history import History, Step
from contextfold.core.protocols import SessionRecord
from contextfold.core.store import SQLiteStore
from contextfold.serve import ServeConfig
from contextfold.serve.apis.chat.wire import ChatWire
from contextfold.serve.app import create_app
from contextfold.serve.runner import ServerThread
from contextfold.serve.sessions.conversation import parse_conversation
from contextfold.serve.sessions.proxy import Proxy
from contextfold.serve.sessions.sessions import SessionManager
from contextfold.serve.upstream.pool import HttpUpstream
from contextfold.strategies.full import FullStrategy
from contextfold.strategies.registry import build_strategy
from contextfold.testing.upstreams.chat import ScriptedServer, echo_reply
from tests._serve import TOKEN, canonical, client, serving, stored

SYSTEM = {"role": "system", "content": "You help."}


def _long(task: str, steps: int) -> list[dict[str, Any]]:
    """A conversation of ``steps`` user/assistant pairs (about 40 tokens each)."""
    out: list[dict[str, Any]] = [SYSTEM]
    for k in range(steps):
        out.append({"role": "user", "content": f"{task}: part {k} " + "detail " * 20})
        out.append({"role": "assistant", "content": f"noted part {k}"})
    return [*out, {"role": "user", "content": f"{task}: what now?"}]


@pytest.fixture
def folder(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[ScriptedServer, threading.Event]]:
    """A folder server (openai:folder) whose every reply waits for the event."""
    release = threading.Event()

    def summarize(body: dict[str, Any]) -> dict[str, Any]:
        assert release.wait(60), "the test never released the fold"
        return {"role": "assistant", "content": json.dumps({"summary": "parts 0 to 5 noted"})}

    with ScriptedServer(summarize) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "folder-key")
        try:
            yield server, release
        finally:
            release.set()


def test_a_bystander_is_served_while_another_session_folds(
    tmp_path: Path, folder: tuple[ScriptedServer, threading.Event]
) -> None:
    folder_server, release = folder
    db = tmp_path / "s.db"
    options = {"strategy": "summary threshold=100", "folder": "openai:folder"}
    with ScriptedServer() as up, serving(up, db, **options) as proxy:
        folding = _long("fold me", 6)
        answers: dict[str, Any] = {}
        thread = threading.Thread(
            target=lambda: answers.update(fold=_ask(proxy, folding, timeout=60))
        )
        thread.start()
        deadline = time.monotonic() + 30
        while not folder_server.requests:  # the fold is in progress, blocked in the folder
            assert time.monotonic() < deadline and thread.is_alive()
            time.sleep(0.01)
        bystander = [SYSTEM, {"role": "user", "content": "just a question"}]
        for turn in range(3):  # served while the fold waits
            reply = _ask(proxy, bystander, timeout=10)
            bystander += [
                {"role": "assistant", "content": reply},
                {"role": "user", "content": f"q{turn}"},
            ]
        assert not release.is_set() and thread.is_alive()
        release.set()
        thread.join(timeout=60)
        assert answers["fold"] == "ok: fold me: what now?"
        folded = [body for _, body in up.requests if "fold me" in json.dumps(body)]
        assert "parts 0 to 5 noted" in json.dumps(folded[-1]["messages"])  # the fold was used
    assert len(stored(db)) == 2


def _ask(proxy: Any, messages: list[dict[str, Any]], *, timeout: float) -> str:
    chat = openai.OpenAI(base_url=proxy.url, api_key=TOKEN, max_retries=0, timeout=timeout)
    reply = chat.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
    return str(reply.choices[0].message.content)


def _slow_echo(body: dict[str, Any]) -> dict[str, Any]:
    time.sleep(0.3)  # long enough for every concurrent request to be in flight at once
    return echo_reply(body)


@pytest.mark.parametrize("stored_first", [False, True])
def test_identical_concurrent_requests_store_the_conversation_once(
    tmp_path: Path, stored_first: bool
) -> None:
    db = tmp_path / "s.db"
    opening = [SYSTEM, {"role": "user", "content": "retry me"}]
    conversation = [*opening, {"role": "assistant", "content": "ok"}]
    conversation.append({"role": "user", "content": "again and again"})
    with ScriptedServer(_slow_echo) as up, serving(up, db, strategy="refold") as proxy:
        if stored_first:
            client(proxy).chat.completions.create(model="m", messages=opening)  # type: ignore[arg-type]
        start = threading.Barrier(20)
        answers: list[str] = []

        def retry(stream: bool) -> None:
            start.wait()
            chat = client(proxy)
            if stream:
                chunks = chat.chat.completions.create(model="m", messages=conversation, stream=True)  # type: ignore[arg-type]
                answers.append(
                    "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
                )
            else:
                reply = chat.chat.completions.create(model="m", messages=conversation)  # type: ignore[arg-type]
                answers.append(str(reply.choices[0].message.content))

        threads = [threading.Thread(target=retry, args=(i % 2 == 1,)) for i in range(20)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert answers == ["ok: again and again"] * 20
    assert list(stored(db).values()) == [canonical(conversation)]  # one copy
    with SQLiteStore(db) as store:
        (sid,) = store.list_sessions()
        calls = store.load_calls(sid)
    assert len(calls) == 20 + stored_first  # every request's call kept, each at its step
    assert {c["step"] for c in calls[int(stored_first) :]} == {3}


class _CountingStore(SQLiteStore):
    """A real SQLite store that counts the sessions read back."""

    loads = 0

    def load_session(self, session_id: str) -> SessionRecord:
        self.loads += 1
        return super().load_session(session_id)


def _manager(store: SQLiteStore) -> SessionManager:
    return SessionManager(store, lambda: build_strategy("refold"), resolve_counter("approx"))


def _reply(k: int) -> dict[str, Any]:
    call = {"id": f"c{k}", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    return {
        "role": "assistant",
        "content": f"PROGRESS: read {k}\nSTALE: {k - 1}",
        "tool_calls": [call],
    }


def _steps(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [SYSTEM, {"role": "user", "content": "read the files"}]
    for k in range(1, n + 1):
        out += [_reply(k), {"role": "tool", "tool_call_id": f"c{k}", "content": f"file {k}\n" * 20}]
    return out


def test_a_failed_requests_steps_are_kept_or_put_back_from_memory(tmp_path: Path) -> None:
    store = _CountingStore(tmp_path / "s.db", synchronous="NORMAL")
    manager, fresh = _manager(store), None
    for n in (3, 6, 9):
        turn = manager.begin(parse_conversation(_steps(n), ""), "")
        manager.record_call(turn, list(turn.view.messages), {"prompt_tokens": 1})
        manager.commit(turn)
    reads = store.loads
    for later in (_steps(14), [*_steps(9), {"role": "user", "content": "another way"}]):
        failing = manager.begin(parse_conversation(_steps(12), ""), "")  # observes and folds
        assert failing.appended == 3
        manager.discard(failing)  # the upstream failed
        again = manager.begin(parse_conversation(later, ""), "")  # holds those steps, or not
        assert store.loads == reads  # kept or put back from memory: nothing read back
        with SQLiteStore(tmp_path / "s.db") as other:  # a manager that never saw the failure
            fresh = _manager(other)
            fresh.load()
            reference = fresh.begin(parse_conversation(later, ""), "")
            assert again.view.messages == reference.view.messages
            assert again.view.elisions == reference.view.elisions
        manager.discard(again)
    store.close()


class _Counted(FullStrategy):
    """``full``, counting the instances made and the steps they observed."""

    made = 0
    observed = 0

    def __init__(self) -> None:
        super().__init__()
        _Counted.made += 1

    def observe(self, step: Step, history: History) -> None:
        _Counted.observed += 1
        super().observe(step, history)


def test_a_retry_right_after_a_failure_continues_from_memory(tmp_path: Path) -> None:
    """The failed request's steps stay in memory, unwritten; the client's retry continues
    from them: no strategy built again, nothing observed again, nothing read back, no
    branch; what is stored is the conversation once, with the retry's call."""
    db = tmp_path / "s.db"
    config = ServeConfig(upstream="http://unused/v1", token=TOKEN, store=db)
    opened: list[_CountingStore] = []
    with ScriptedServer() as up:

        def open_sessions() -> SessionManager:  # on the session thread, which owns the store
            opened.append(_CountingStore(db))
            return SessionManager(opened[0], _Counted, resolve_counter("approx"))

        proxy = Proxy(config, HttpUpstream(up.url, wire=ChatWire()), open_sessions)
        with ServerThread(create_app(proxy), host="127.0.0.1", lifespan="on") as server:
            url = f"http://127.0.0.1:{server.port}/v1"
            chat = openai.OpenAI(base_url=url, api_key=TOKEN, max_retries=0, timeout=30)
            talk = _steps(30)
            chat.chat.completions.create(model="m", messages=talk)  # type: ignore[arg-type]
            talk = [*talk, {"role": "user", "content": "go on"}]
            (store,) = opened
            for attempt in range(3):
                made, observed, loads = _Counted.made, _Counted.observed, store.loads
                up.fail = (500, "busy")
                with pytest.raises(openai.InternalServerError):
                    chat.chat.completions.create(model="m", messages=talk)  # type: ignore[arg-type]
                up.fail = None
                reply = chat.chat.completions.create(model="m", messages=talk)  # type: ignore[arg-type]
                assert reply.choices[0].message.content == f"ok: {talk[-1]['content']}"
                assert (_Counted.made, store.loads) == (made, loads), attempt
                assert _Counted.observed == observed + (1 if attempt == 0 else 2)  # new, once
                talk += [{"role": "assistant", "content": "x"}]
                talk += [{"role": "user", "content": f"more {attempt}"}]
    assert list(stored(db).values()) == [canonical(talk[:-2])]  # one session, never branched
    with SQLiteStore(db) as check:
        (sid,) = check.list_sessions()
        assert [c["step"] for c in check.load_calls(sid)] == [31, 32, 34, 36]  # no failed call
