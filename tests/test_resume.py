"""Repeating and resuming live runs into one store: unique session ids, --session, --resume."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from contextfold.agent import Agent
from contextfold.agent.resume import model_calls_made, resume
from contextfold.bench.live import LiveResult, run_live
from contextfold.cli import app
from contextfold.core.errors import ModelError
from contextfold.core.history import History
from contextfold.core.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.core.meter import Meter
from contextfold.core.protocols import UserSimulator
from contextfold.core.store import SQLiteStore
from contextfold.core.tokens import ApproxCounter
from contextfold.envs import FilesEnv
from contextfold.models import ScriptedModel, tool_call
from contextfold.strategies.registry import build_strategy

ADD = tool_call("calculator", {"expression": "2 + 2"}, call_id="c1")
MUL = tool_call("calculator", {"expression": "4 * 3"}, call_id="c2")


def models(*scripts: list[object]) -> Iterator[ScriptedModel]:
    for script in scripts:
        yield ScriptedModel(script)  # type: ignore[arg-type]


def _live(store: SQLiteStore, made: Iterator[ScriptedModel], **kw: object) -> LiveResult:
    return run_live(
        "tutorial:budget",
        None,
        "full",
        lambda: next(made),
        counter=ApproxCounter(),
        store=store,
        **kw,  # type: ignore[arg-type]
    )


def test_two_runs_of_one_task_get_their_own_sessions(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    first = _live(store, models(["4."]))
    second = _live(store, models(["4."]))
    ids = store.list_sessions()
    assert len(ids) == 2 and first.history.session_id != second.history.session_id


def test_a_crashed_run_resumes_where_it_stopped(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    with pytest.raises(ModelError):  # the script runs out: a crash after two tool steps
        _live(store, models([ADD, MUL]), session="run-1", max_steps=5)
    stored = History.open(store, "run-1")
    assert [s.kind for s in stored] == ["user", "assistant", "assistant"]
    model = ScriptedModel(["The total is 16."])
    result = _live(store, iter([model]), session="run-1", resume=True, max_steps=5)
    [call] = model.calls  # the model is shown the tool results from before the crash
    assert any(m.content == "4" for m in call.messages) and any(
        m.content == "12" for m in call.messages
    )
    history = History.open(store, "run-1")
    assert [s.kind for s in history] == ["user", "assistant", "assistant", "assistant"]
    assert result.stop == "answered"


def test_resuming_counts_the_steps_already_made(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    with pytest.raises(ModelError):
        _live(store, models([ADD, MUL]), session="run-1", max_steps=5)
    idle = ScriptedModel([])
    result = _live(store, iter([idle]), session="run-1", resume=True, max_steps=2)
    assert result.stop == "max_steps" and not idle.calls


def test_resuming_another_task_is_refused(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    _live(store, models(["4."]), session="run-1")
    with pytest.raises(Exception, match="not a run of this task"):
        run_live(
            "tutorial:study-plan",
            None,
            "full",
            lambda: ScriptedModel([]),
            counter=ApproxCounter(),
            store=store,
            session="run-1",
            resume=True,
        )


class _User:
    def __init__(self, replies: list[str | None]) -> None:
        self.replies = replies

    def respond(self, messages: object) -> str | None:
        return self.replies.pop(0)


def test_resume_rebuilds_the_environment_and_lets_the_user_speak_next() -> None:
    history = History(SystemMessage("s"))
    history.append(UserMessage("write a file"))
    call = ToolCall("c1", "write_file", json.dumps({"path": "a.py", "content": "x = 1"}))
    history.append(AssistantMessage(None, tool_calls=(call,)), ToolMessage("wrote a.py", "c1"))
    history.append(AssistantMessage("Done."))
    env = FilesEnv({})
    model = ScriptedModel(["Bye."])
    user: UserSimulator = _User(["Thanks, and again?", None])
    strategy, meter = build_strategy("full"), Meter()

    def make_agent(leg_user: UserSimulator | None, steps: int) -> Agent:
        return Agent(
            model, strategy, env, history=history, user=leg_user, meter=meter, max_steps=steps
        )

    result = resume(history, strategy, env, make_agent, user=user, max_steps=10)
    assert env.files == {"a.py": "x = 1"}  # the recorded write ran again
    assert [s.kind for s in history] == ["user", "assistant", "assistant", "user", "assistant"]
    assert result.stop == "user_stop" and model_calls_made(history) == 3


def _run(path: Path, *options: str) -> Result:
    args = ["run", "--env", "tutorial:budget", "--model", "openai:m", "--store", str(path)]
    return CliRunner().invoke(app, [*args, *options])


def test_cli_session_and_resume_options(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SQLiteStore(path) as store:
        History(SystemMessage("s"), store=store, session_id="taken")
    taken = _run(path, "--session", "taken")
    assert taken.exit_code == 2 and "already exists" in taken.output
    assert "--resume taken" in taken.output
    missing = _run(path, "--resume", "nope")
    assert missing.exit_code == 2 and "no session 'nope'" in missing.output
    no_store = CliRunner().invoke(app, ["run", "--env", "tutorial:budget", "--resume", "taken"])
    assert no_store.exit_code == 2 and "needs --store" in no_store.output


def test_the_run_command_closes_its_store_on_every_way_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A finished run, a refused session id and a run whose model fails each leave the store
    closed (the real SQLite stores ``run`` opened, watched from outside)."""
    import contextfold.core.store as stores

    opened: list[SQLiteStore] = []

    def watch(target: str | Path, **kw: object) -> SQLiteStore:
        store = SQLiteStore(target)
        opened.append(store)
        return store

    monkeypatch.setattr(stores, "open_store", watch)
    path = tmp_path / "s.db"
    argv = ["run", "--env", "workspace:reorder-code", "--model", "scripted", "-s", "full"]
    done = CliRunner().invoke(app, [*argv, "--store", str(path), "--session", "one"])
    assert done.exit_code == 0, done.output
    refused = CliRunner().invoke(app, [*argv, "--store", str(path), "--session", "one"])
    assert refused.exit_code == 2 and "already exists" in refused.output
    failed = _run(path, "--session", "two", "--base-url", "http://127.0.0.1:9/v1")
    assert failed.exit_code == 2 and "cannot be reached" in failed.output
    assert len(opened) == 3 and all("[closed]" in repr(s) for s in opened)
    with SQLiteStore(path) as store:  # what the finished run recorded is there
        assert "one" in store.list_sessions()
