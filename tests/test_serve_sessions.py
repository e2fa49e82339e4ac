"""Sessions through contextfold serve: concurrent clients never mixed, identical openings kept
apart, rewritten histories branched (nothing stored altered), the session header, a proxy
restart, and a client that hangs up mid-stream."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from contextfold.core.store import SQLiteStore
from contextfold.testing.upstreams.chat import ScriptedServer
from tests._serve import TOKEN, canonical, client, idle, serving, stored

OPENING = [
    {"role": "system", "content": "You are a helpful agent."},
    {"role": "user", "content": "Start the task."},
]


def _echo_all(body: dict[str, Any]) -> dict[str, Any]:
    """Replies with a digest of the whole conversation it was sent, so a client can check that
    the upstream saw exactly its own conversation."""
    users = [m["content"] for m in body["messages"] if m["role"] == "user"]
    return {"role": "assistant", "content": " | ".join(users)}


def _converse(proxy: Any, name: str, turns: int, out: dict[str, Any], **headers: str) -> None:
    chat = client(proxy, **headers)
    messages: list[dict[str, Any]] = [dict(m) for m in OPENING]
    for turn in range(turns):
        reply = chat.chat.completions.create(model="m", messages=messages)
        users = [m["content"] for m in messages if m["role"] == "user"]
        assert reply.choices[0].message.content == " | ".join(users), name
        messages.append({"role": "assistant", "content": reply.choices[0].message.content})
        messages.append({"role": "user", "content": f"{name} turn {turn}"})
    out[name] = messages[:-2]  # what the last request sent


def test_eight_concurrent_sessions_that_open_identically_are_never_mixed(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with ScriptedServer(_echo_all) as up, serving(up, db, strategy="full") as proxy:
        finals: dict[str, Any] = {}
        errors: list[BaseException] = []

        def run(name: str) -> None:
            try:
                _converse(proxy, name, 5, finals)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(f"client{i}",)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert not errors and len(finals) == 8
        for _headers, body in up.requests:  # every upstream call got one whole conversation
            users = [m["content"] for m in body["messages"] if m["role"] == "user"]
            assert len({u.split()[0] for u in users[1:]}) <= 1
    sessions = stored(db)
    for name, messages in finals.items():  # each conversation is one session of its own
        owners = [sid for sid, msgs in sessions.items() if msgs == canonical(messages)]
        assert len(owners) == 1, name
    owners_all = {
        sid for sid, msgs in sessions.items() for m in finals.values() if msgs == canonical(m)
    }
    assert len(owners_all) == 8


def test_identical_openings_part_when_they_differ_and_rewrites_branch(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with ScriptedServer(_echo_all) as up, serving(up, db, strategy="full") as proxy:
        chat = client(proxy)
        a = [*OPENING]
        chat.chat.completions.create(model="m", messages=a)
        chat.chat.completions.create(model="m", messages=a)  # b: the same opening, later
        a = [*a, {"role": "assistant", "content": "x"}, {"role": "user", "content": "A goes on"}]
        b = [*OPENING, {"role": "assistant", "content": "x"}, {"role": "user", "content": "B"}]
        chat.chat.completions.create(model="m", messages=a)
        chat.chat.completions.create(model="m", messages=b)
        before = stored(db)
        edited = [OPENING[0], {"role": "user", "content": "Start the task, edited."}, *a[2:]]
        chat.chat.completions.create(model="m", messages=edited)
        chat.chat.completions.create(model="m", messages=a)  # A again
    after = stored(db)
    assert sorted(map(json.dumps, after.values())) == sorted(
        map(json.dumps, [canonical(a), canonical(b), canonical(edited)])
    )
    assert {k: v for k, v in after.items() if k in before} == before  # nothing altered
    with SQLiteStore(db) as store:
        metas = {sid: store.load_session(sid).meta["serve"] for sid in store.list_sessions()}
    a_id = next(sid for sid, msgs in after.items() if msgs == canonical(a))
    b_id = next(sid for sid, msgs in after.items() if msgs == canonical(b))
    assert metas[b_id] == {  # user, "x"; the arm and unit of the conversation it branched from
        "family": "",
        "parent": a_id,
        "fork_at": 2,
        "arm": "treated",
        "unit": a_id,
    }
    assert metas[a_id]["parent"] is None


def test_the_session_header_names_the_session_and_its_branches(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with ScriptedServer(_echo_all) as up:
        with serving(up, db, strategy="full") as proxy:
            chat = client(proxy, **{"X-Contextfold-Session": "task-7"})
            chat.chat.completions.create(model="m", messages=OPENING)
            plain = client(proxy)
            plain.chat.completions.create(model="m", messages=OPENING)
            rewritten = [OPENING[0], {"role": "user", "content": "Another start."}]
            chat.chat.completions.create(model="m", messages=rewritten)
        with serving(up, db, strategy="full") as proxy:  # a restart: sessions come back
            chat = client(proxy, **{"X-Contextfold-Session": "task-7"})
            more = [
                *OPENING,
                {"role": "assistant", "content": "x"},
                {"role": "user", "content": "y"},
            ]
            chat.chat.completions.create(model="m", messages=more)
    sessions = stored(db)
    assert sessions["task-7"] == canonical(more)
    assert sessions["task-7~2"] == canonical(rewritten)
    assert len(sessions) == 3 and {"task-7", "task-7~2"} < set(sessions)  # + the plain one
    with pytest.raises(httpx.HTTPStatusError):
        bad = {"Authorization": f"Bearer {TOKEN}", "X-Contextfold-Session": "a b"}
        with ScriptedServer() as up2, serving(up2, None) as proxy:
            body = {"model": "m", "messages": OPENING}
            httpx.post(f"{proxy.url}/chat/completions", json=body, headers=bad).raise_for_status()


def test_a_client_hanging_up_mid_stream_leaves_the_store_consistent(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    long_reply = {"role": "assistant", "content": "word " * 200}
    up = ScriptedServer(lambda body: long_reply, chunk_delay=0.01)
    with up, serving(up, db, strategy="full") as proxy:
        chat = client(proxy)
        first = chat.chat.completions.create(model="m", messages=OPENING)
        messages = [
            *OPENING,
            {"role": "assistant", "content": first.choices[0].message.content},
        ]
        messages.append({"role": "user", "content": "go on"})
        headers = {"Authorization": f"Bearer {TOKEN}"}
        body = {"model": "m", "messages": messages, "stream": True}
        with httpx.stream(
            "POST", f"{proxy.url}/chat/completions", json=body, headers=headers
        ) as response:
            assert response.status_code == 200
            next(response.iter_raw())  # the first events, then hang up
        idle(proxy)
        assert list(stored(db).values()) == [canonical(OPENING)]  # the request left nothing
        again = chat.chat.completions.create(model="m", messages=messages)
        assert again.choices[0].message.content == long_reply["content"]
    assert list(stored(db).values()) == [canonical(messages)]  # same session, one step on
    with SQLiteStore(db) as store:
        (sid,) = store.list_sessions()
        steps = store.load_session(sid).steps
        assert [s.index for s in steps] == list(range(len(steps)))
