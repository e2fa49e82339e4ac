"""A turn that adds no step (a client's retry) on one replica while another replica extends the
same session: its first write is a call record, which the store refuses because the session
moved on, so the call is kept in a branch holding exactly the steps its prompt held."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from contextfold.core.counters import resolve_counter
from contextfold.core.history import Step
from contextfold.core.messages import to_openai
from contextfold.core.store import PostgresStore
from contextfold.serve.sessions.conversation import parse_conversation
from contextfold.serve.sessions.sessions import SessionManager
from contextfold.strategies.registry import build_strategy
from contextfold.testing.postgres import TempPostgres
from contextfold.testing.upstreams.chat import ScriptedServer
from tests._serve import canonical, stored
from tests.test_serve_replicas import OPENING, ask, echo_all, pg_manager, replica


def _continued(reply: str, user: str) -> list[dict[str, Any]]:
    return [*OPENING, {"role": "assistant", "content": reply}, {"role": "user", "content": user}]


def _calls_point_at_their_prompts(url: str) -> dict[str, list[int]]:
    """Check every stored call: sent the session's system and steps before its index (the
    ``full`` strategy sends all), one call per step, in order; the calls' steps per session."""
    out: dict[str, list[int]] = {}
    with PostgresStore(url) as store:
        for sid in store.list_sessions():
            record = store.load_session(sid)
            calls = store.load_calls(sid)
            steps = [c["step"] for c in calls]
            assert steps == sorted(set(steps)), f"{sid}: calls {steps} out of order"
            for call in calls:
                assert call["step"] <= len(record.steps)
                prompt = [record.system] if record.system else []
                prompt += [m for s in record.steps[: call["step"]] for m in s.messages]
                assert call["messages"] == prompt, f"{sid}: call {call['call']} mis-indexed"
            out[sid] = steps
    return out


def test_a_retry_that_lost_the_session_keeps_its_call_in_a_branch(
    postgres: TempPostgres,
) -> None:
    """Two stores on one database, the interleaving fixed: replica two begins a retry of a
    stored request, replica one extends the session and commits, then two commits."""
    url = postgres.new_database()
    one, two = pg_manager(url), pg_manager(url)
    first = one.begin(parse_conversation(OPENING, ""), "")
    one.record_call(first, list(first.view.messages), {"prompt_tokens": 1})
    one.commit(first)
    session = first.session.id
    retry = two.begin(parse_conversation(OPENING, ""), "")
    assert (retry.session.id, retry.created, retry.appended) == (session, False, 0)
    longer = _continued("hello", "go")
    ahead = one.begin(parse_conversation(longer, ""), "")
    one.record_call(ahead, list(ahead.view.messages), {"prompt_tokens": 3})
    one.commit(ahead)
    two.record_call(retry, list(retry.view.messages), {"prompt_tokens": 2})
    two.commit(retry)  # its call record finds the session moved on: a branch
    sessions = stored(url)
    assert sessions[session] == canonical(longer)
    (branch,) = set(sessions) - {session}
    assert sessions[branch] == canonical(OPENING)
    assert _calls_point_at_their_prompts(url) == {session: [1, 3], branch: [1]}
    with PostgresStore(url) as store:
        assert [c["usage"] for c in store.load_calls(session)] == [
            {"prompt_tokens": 1},
            {"prompt_tokens": 3},
        ]
        assert [c["usage"] for c in store.load_calls(branch)] == [{"prompt_tokens": 2}]
        assert store.load_session(branch).meta["serve"] == {
            "family": "",
            "parent": session,
            "fork_at": 1,
            "arm": "treated",
            "unit": session,
        }
    assert two.sync() == 0  # the loser already reopened both
    on_retry = _continued("retried", "x")
    later = two.begin(parse_conversation(on_retry, ""), "")
    assert later.session.id == branch and not later.created  # the retry's reply goes on there


def test_a_retry_on_a_replica_while_the_other_extends_the_session(postgres: TempPostgres) -> None:
    """Real ``contextfold serve`` processes: the retry's upstream call is held until the other
    replica has served the conversation's next request; nothing duplicated, nothing mis-indexed."""
    url = postgres.new_database()
    held, release = threading.Event(), threading.Event()
    seen: list[int] = []

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        seen.append(len(body["messages"]))
        n = len(seen)
        if n == 2:  # the retry: wait until the other replica went ahead
            held.set()
            assert release.wait(60)
        message = echo_all(body)
        return {**message, "content": f"{message['content']} #{n}"}

    with ScriptedServer(reply) as up, replica(up.url, url) as a, replica(up.url, url) as b:
        answer = ask(a, OPENING)
        retried: dict[str, str] = {}
        thread = threading.Thread(target=lambda: retried.update(text=ask(b, OPENING)))
        thread.start()
        assert held.wait(60)  # replica b has begun the retry's turn on the stored session
        longer = _continued(answer, "next")
        assert ask(a, longer) == "Start the task. | next #3"
        release.set()
        thread.join(timeout=60)
        assert retried == {"text": "Start the task. #2"}
        assert len(up.requests) == 3
    sessions = stored(url)
    assert sorted(map(repr, sessions.values())) == sorted(
        repr(canonical(m)) for m in (OPENING, longer)
    )  # the session as served by a, and a branch holding what the retry was sent
    calls = _calls_point_at_their_prompts(url)
    main = next(sid for sid, msgs in sessions.items() if msgs == canonical(longer))
    branch = next(sid for sid in sessions if sid != main)
    assert calls == {main: [1, 3], branch: [1]}  # three upstream calls, each stored once
    with PostgresStore(url) as store:
        assert store.load_session(branch).meta["serve"]["parent"] == main
        sent = [to_openai(m) for m in store.load_calls(branch)[0]["messages"]]
    assert sent == canonical(OPENING)


class _Paused(PostgresStore):
    """A real PostgreSQL store that runs ``after_step`` (once) right after it appended the
    step of that index: a fixed point in a commit at which another replica may write."""

    def __init__(self, url: str, at: int, after_step: Callable[[], None]) -> None:
        super().__init__(url)
        self.at, self.after_step = at, after_step

    def append_step(self, session_id: str, step: Step) -> None:
        super().append_step(session_id, step)
        if step.index == self.at:
            self.at = -1
            self.after_step()


def test_a_turn_whose_steps_were_written_before_its_call_lost_keeps_them_once_in_the_session(
    postgres: TempPostgres,
) -> None:
    """Replica one's commit appends its two steps; before its call record, replica two
    extends the session further. The call goes to a branch forked after those two steps."""
    url = postgres.new_database()
    two = pg_manager(url)
    ahead = _continued("hello", "go")
    further = [*ahead, {"role": "assistant", "content": "hi"}, {"role": "user", "content": "more"}]

    def two_goes_further() -> None:
        turn = two.begin(parse_conversation(further, ""), "")
        assert turn.appended == 2  # it sees one's steps, written a moment ago
        two.record_call(turn, list(turn.view.messages), {"prompt_tokens": 5})
        two.commit(turn)

    store = _Paused(url, 2, two_goes_further)
    one = SessionManager(store, lambda: build_strategy("full"), resolve_counter("approx"))
    first = one.begin(parse_conversation(OPENING, ""), "")
    one.record_call(first, list(first.view.messages), {"prompt_tokens": 1})
    one.commit(first)
    session = first.session.id
    turn = one.begin(parse_conversation(ahead, ""), "")
    one.record_call(turn, list(turn.view.messages), {"prompt_tokens": 3})
    one.commit(turn)  # steps 1 and 2 written, then two went further: the call conflicts
    sessions = stored(url)
    assert sessions[session] == canonical(further)
    (branch,) = set(sessions) - {session}
    assert sessions[branch] == canonical(ahead)
    assert _calls_point_at_their_prompts(url) == {session: [1, 5], branch: [3]}
    with PostgresStore(url) as check:
        meta = check.load_session(branch).meta["serve"]
    assert meta == {
        "family": "",
        "parent": session,
        "fork_at": 3,
        "arm": "treated",
        "unit": session,
    }
    store.close()
