"""`contextfold run`: one task live, end to end, offline (tau2's real environment and
evaluator; the scripted model, and once the real embedded model)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from contextfold.bench.live import run_live
from contextfold.cli import app
from contextfold.core.history import History
from contextfold.core.store import SQLiteStore
from contextfold.core.tokens import ApproxCounter
from contextfold.envs.tau2 import Tau2Env
from contextfold.models import ScriptedModel, tool_call

RUN_KEYS = {"reward", "steps", "prompt_tokens", "completion_tokens", "cost_usd"}


def models(*scripts: list[object]) -> Iterator[ScriptedModel]:
    for script in scripts:
        yield ScriptedModel(script)  # type: ignore[arg-type]


@pytest.mark.tau2
def test_a_tau2_task_runs_live_and_is_scored_by_tau2(tmp_path: Path) -> None:
    env = Tau2Env("airline", "19")  # cancel reservation Z7GOZK
    calls = [
        tool_call(a.name, a.arguments, call_id=f"c{i}")
        for i, a in enumerate(env.task.raw.evaluation_criteria.actions)
    ]
    # run_live builds the user's model first, then the agent's
    made = models(["I want to cancel a trip.", "Thanks. ###STOP###"], [*calls, "Cancelled."])
    store = SQLiteStore(tmp_path / "s.db")
    result = run_live(
        "tau2:airline",
        "19",
        "refold",
        lambda: next(made),
        counter=ApproxCounter(),
        store=store,
    )
    assert result.reward == 1.0 and result.stop == "user_stop"
    summary = result.summary()
    assert RUN_KEYS | {"prefix_cache_reuse"} <= set(summary)
    assert summary["tool_calls"] == len(calls)
    session = result.history.session_id
    assert session is not None and session.startswith("tau2-airline-19-")
    reopened = History.open(store, session)
    assert [s.messages for s in reopened] == [s.messages for s in result.history]
    assert len(store.load_calls(session)) == len(result.meter.calls)


@pytest.mark.embedded
@pytest.mark.slow
def test_cli_runs_a_tutorial_task_with_the_embedded_model(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    res = CliRunner().invoke(
        app,
        [
            "run",
            "--env",
            "tutorial:budget",
            "--model",
            "local",
            "--threads",
            "1",
            "--max-steps",
            "2",
            "--json",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert RUN_KEYS | {"prefix_cache_reuse"} <= set(data)
    assert data["steps"] >= 2 and data["prompt_tokens"] > 0


@pytest.mark.embedded
@pytest.mark.tau2
def test_cli_names_bad_environments() -> None:
    """With ``run``'s default model, the embedded one (its tokenizer loads first)."""
    res = CliRunner().invoke(app, ["run", "--env", "mars:base"])
    assert res.exit_code == 2 and "unknown environment 'mars:base'" in res.output
    res = CliRunner().invoke(app, ["run", "--env", "tau2:airline"])
    assert res.exit_code == 2 and "needs --task" in res.output
