"""``serve --learn``: a session no request continued for ``idle_end`` seconds has ended; its
strategy records it once in the experience all sessions share (serve/sessions/learning.py)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from contextfold.cli import app
from contextfold.core.counters import resolve_counter
from contextfold.core.errors import ConfigError
from contextfold.core.experience import Experience
from contextfold.core.experience_file import load_experiences, save_experiences
from contextfold.core.store import MemoryStore
from contextfold.serve.build import build_proxy, make_strategy_factory
from contextfold.serve.config import ServeConfig
from contextfold.serve.sessions.conversation import parse_conversation
from contextfold.serve.sessions.learning import IdleEnds
from contextfold.serve.sessions.sessions import SessionManager, Turn
from contextfold.strategies.refold import RefoldStrategy
from contextfold.testing.upstreams.chat import ScriptedServer
from tests._serve import client, serving


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def opening(task: str) -> list[Any]:
    return [{"role": "system", "content": "You help."}, {"role": "user", "content": task}]


def manager(
    experience: Experience, clock: Clock, store: MemoryStore | None = None
) -> SessionManager:
    def make() -> RefoldStrategy:
        strategy = RefoldStrategy()
        strategy.share(experience)
        return strategy

    ends = IdleEnds(60.0, clock=clock)
    return SessionManager(store or MemoryStore(), make, resolve_counter("approx"), ends=ends)


def serve(sessions: SessionManager, messages: list[dict[str, Any]], *, commit: bool = True) -> Turn:
    turn = sessions.begin(parse_conversation(messages, ""), "")
    sessions.record_call(turn, list(turn.view.messages), {"prompt_tokens": 1})
    if commit:
        sessions.commit(turn)
    return turn


def test_a_session_idle_for_idle_end_seconds_is_recorded_once() -> None:
    experience, clock = Experience(), Clock()
    sessions = manager(experience, clock)
    first = opening("Book a flight.")
    serve(sessions, first)
    reply = {"role": "assistant", "content": "Which date?"}
    serve(sessions, [*first, reply, {"role": "user", "content": "Monday."}])
    clock.now = 59.0
    serve(sessions, opening("Cancel my order."))  # not idle long enough yet: nothing recorded
    assert experience.lengths == []
    clock.now = 130.0
    serve(sessions, opening("Change my address."))  # both earlier sessions have ended
    assert sorted(experience.lengths) == [1, 2]  # the calls each made
    # a client continues the first session after it ended: its later calls are not recorded
    later = [*first, reply, {"role": "user", "content": "Monday."}]
    later += [{"role": "assistant", "content": "Done."}, {"role": "user", "content": "Thanks."}]
    serve(sessions, later)
    clock.now = 400.0
    serve(sessions, opening("Where is my parcel?"))
    assert sorted(experience.lengths) == [1, 1, 2]  # only the address session was added


def test_a_session_loaded_from_the_store_counts_the_calls_it_holds() -> None:
    """After a restart the sessions come back with new strategies that rendered nothing: one
    that then goes idle counts the calls its history shows (its replies), not zero."""
    store, clock = MemoryStore(), Clock()
    before = manager(Experience(), clock, store)
    task = opening("Book a flight.")
    for n in range(3):
        serve(before, task)
        task = [*task, {"role": "assistant", "content": f"reply {n}"}]
        task.append({"role": "user", "content": f"more {n}"})
    experience = Experience()
    after = manager(experience, clock, store)
    assert after.load() == 1
    clock.now = 100.0
    serve(after, opening("Cancel my order."))
    assert experience.lengths == [2]  # two replies came back; the third never did


def test_a_session_in_flight_is_not_ended_until_it_goes_idle_after_its_request() -> None:
    """A request that holds a session past the idle time: the session is not recorded while
    busy, and counts as used again when the request ends."""
    experience, clock = Experience(), Clock()
    sessions = manager(experience, clock)
    task = opening("Book a flight.")
    serve(sessions, task)  # used at 0
    more = [*task, {"role": "assistant", "content": "When?"}, {"role": "user", "content": "Mon"}]
    busy = serve(sessions, more, commit=False)  # a slow second request
    clock.now = 1000.0
    serve(sessions, opening("Cancel my order."))
    assert experience.lengths == [] and busy.session.busy
    sessions.commit(busy)  # the slow request ends: used at 1000
    clock.now = 1030.0
    serve(sessions, opening("Where is my parcel?"))
    assert experience.lengths == []  # only 30 seconds idle
    clock.now = 1100.0
    serve(sessions, opening("Change my address."))
    assert sorted(experience.lengths) == [1, 1, 2]  # the flight (2 calls), order, parcel


def test_learn_shares_a_thawed_experience_seeded_from_the_file(tmp_path: Path) -> None:
    path = tmp_path / "exp.json"
    save_experiences(path, {"refold": Experience([5, 7])})
    make = make_strategy_factory(ServeConfig(upstream="local", experience=path, learn=True))
    first, second = make(), make()
    assert isinstance(first, RefoldStrategy) and isinstance(second, RefoldStrategy)
    shared = first.rule.experience
    assert shared is not None and shared is second.rule.experience
    assert not shared.frozen and shared.lengths == [5, 7]
    fresh = make_strategy_factory(ServeConfig(upstream="local", learn=True))()
    assert isinstance(fresh, RefoldStrategy) and fresh.rule.experience is not None
    assert fresh.rule.experience.lengths == [] and not fresh.rule.experience.frozen
    plain = make_strategy_factory(ServeConfig(upstream="local"))()
    assert isinstance(plain, RefoldStrategy) and plain.rule.experience is None
    with pytest.raises(ValueError, match="--idle-end must be a positive number of seconds"):
        ServeConfig(upstream="local", no_auth=True, learn=True, idle_end=0).check()


def test_a_proxy_with_learn_starts_later_sessions_from_the_ended_ones(tmp_path: Path) -> None:
    """Through real requests: a conversation of two calls goes idle; the next one's strategy
    shares an experience holding it (``serve --learn --idle-end``)."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": f"noted {len(body['messages'])}"}

    db = tmp_path / "s.db"
    with ScriptedServer(reply) as up, serving(up, db, learn=True, idle_end=1.0) as proxy:
        chat = client(proxy, **{"X-Contextfold-Session": "first"})
        task = opening("Book a flight.")
        answer = chat.chat.completions.create(model="m", messages=task)
        said = answer.choices[0].message.content
        more: list[Any] = [*task, {"role": "assistant", "content": said}]
        chat.chat.completions.create(
            model="m", messages=[*more, {"role": "user", "content": "Mon"}]
        )
        time.sleep(1.3)
        client(proxy, **{"X-Contextfold-Session": "second"}).chat.completions.create(
            model="m", messages=opening("Cancel my order.")
        )
        manager, ends = proxy.proxy.manager, proxy.proxy.manager.ends
        assert ends is not None and proxy.proxy.thread.call(lambda: set(ends.ended)) == {"first"}
        strategy = manager.sessions["second"].strategy
        assert isinstance(strategy, RefoldStrategy) and strategy.rule.experience is not None
        assert strategy.rule.experience.lengths == [2]


def test_save_experience_writes_what_the_proxy_learned_for_the_next_proxy(tmp_path: Path) -> None:
    """``serve --learn --save-experience``: each sweep that ends a session writes the strategy's
    entry (other labels kept); a proxy started from that file begins where this one stopped."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": f"noted {len(body['messages'])}"}

    path = tmp_path / "exp.json"
    save_experiences(path, {"carryon": Experience([9])})
    options = {"learn": True, "idle_end": 1.0, "save_experience": path}
    with ScriptedServer(reply) as up, serving(up, None, **options) as proxy:
        for session in ("first", "second"):
            chat = client(proxy, **{"X-Contextfold-Session": session})
            chat.chat.completions.create(model="m", messages=opening(f"Task {session}."))
            time.sleep(1.3)
        assert load_experiences(path)["refold"].lengths == [1]  # the second one not ended yet
        assert load_experiences(path)["carryon"].lengths == [9]
    make = make_strategy_factory(ServeConfig(upstream="local", experience=path, learn=True))
    strategy = make()
    assert isinstance(strategy, RefoldStrategy) and strategy.rule.experience is not None
    assert strategy.rule.experience.lengths == [1]


def test_save_experience_refuses_what_it_would_lose_or_could_not_write(tmp_path: Path) -> None:
    foreign = tmp_path / "notes.json"
    foreign.write_text('["not", "an", "experience"]')
    config = ServeConfig(upstream="local", no_auth=True, learn=True, save_experience=foreign)
    with pytest.raises(ConfigError, match="expected an object of strategy labels"):
        build_proxy(config)
    assert foreign.read_text() == '["not", "an", "experience"]'
    missing = tmp_path / "no" / "exp.json"
    with pytest.raises(ConfigError, match=r"directory .* does not exist"):
        build_proxy(
            ServeConfig(upstream="local", no_auth=True, learn=True, save_experience=missing)
        )
    with pytest.raises(ValueError, match="--save-experience needs --learn"):
        ServeConfig(upstream="local", no_auth=True, save_experience=tmp_path / "e.json").check()
    argv = ["serve", "--upstream", "local", "--no-auth", "--idle-end", "60"]
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 2 and "--idle-end needs --learn" in res.output


def test_an_experience_file_that_cannot_be_written_is_logged_and_the_request_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": "noted"}

    path = tmp_path / "exp.json"
    options = {"learn": True, "idle_end": 0.5, "save_experience": path}
    with ScriptedServer(reply) as up, serving(up, None, **options) as proxy:
        chat = client(proxy, **{"X-Contextfold-Session": "first"})
        chat.chat.completions.create(model="m", messages=opening("Task one."))
        path.mkdir()  # the file cannot be replaced now
        time.sleep(0.7)
        chat = client(proxy, **{"X-Contextfold-Session": "second"})
        answer = chat.chat.completions.create(model="m", messages=opening("Task two."))
        assert answer.choices[0].message.content == "noted"
        strategy = proxy.proxy.manager.sessions["second"].strategy
        assert isinstance(strategy, RefoldStrategy) and strategy.rule.experience is not None
        assert strategy.rule.experience.lengths == [1]  # learned, kept in memory
    assert "cannot write the experience file" in caplog.text
