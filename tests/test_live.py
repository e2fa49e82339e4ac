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


def test_the_run_summary_names_only_what_happened(tmp_path: Path) -> None:
    """No row of zeros: the folder's and carryon's figures appear only when they are not 0."""
    out = tmp_path / "run.json"
    argv = ["run", "--env", "workspace:reorder-code", "--model", "scripted", "-s", "full"]
    res = CliRunner().invoke(app, [*argv, "--json", str(out)], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    summary = json.loads(out.read_text())
    assert summary["fold_calls"] == 0 and summary["carriers_added"] == 0
    # the summary, up to the line naming the JSON file (a path, which is never wrapped)
    tail = res.output[res.output.index("workspace:reorder-code task") : res.output.rindex("wrote ")]
    assert f"wrote {out}" in res.output
    assert "reward 1" in tail and "default prices" in tail
    assert "fold" not in tail and "carriers" not in tail
    assert len(tail.splitlines()) <= 8 and max(len(line) for line in tail.splitlines()) <= 80


def test_summary_rows_show_the_folder_when_it_was_called() -> None:
    from contextfold.commands.live import summary_rows

    base = {
        "env": "tutorial:budget", "task": "budget", "strategy": "compact", "reward": None,
        "stop": "answered", "steps": 3, "prompt_tokens": 1200, "completion_tokens": 40,
        "cost_usd": 0.01, "prefix_cache_reuse": 0.5, "peak_context_tokens": 500,
        "tool_calls": 2, "tool_errors": 0, "forced_compactions": 0, "fold_calls": 0,
        "fold_prompt_tokens": 0, "fold_completion_tokens": 0, "fold_cost_usd": 0.0,
        "fold_rejected": 0, "fold_ms_median": 0.0, "fold_cache_hits": 0,
        "carriers_retained": 0, "carriers_updated": 0, "carriers_added": 0,
        "total_cost_usd": 0.01, "reward_skipped": [],
    }  # fmt: skip
    quiet = dict(summary_rows(base, "openai"))
    assert list(quiet) == ["outcome", "tools", "tokens", "cost"]
    assert "no evaluator" in quiet["outcome"] and "openai prices" in quiet["cost"]
    folded = {**base, "fold_calls": 2, "fold_prompt_tokens": 900, "total_cost_usd": 0.02}
    rows = dict(summary_rows({**folded, "forced_compactions": 1, "carriers_added": 3}, "default"))
    assert "2 calls" in rows["folder"] and "900 prompt" in rows["folder"]
    assert rows["compactions"] == "1 forced by the budget" and "added 3" in rows["carriers"]


def test_run_meters_with_the_profile_and_prices_it_is_given(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    argv = ["run", "--env", "workspace:reorder-code", "--model", "scripted", "-s", "full"]
    costs = {}
    for prices in ("default", "openai"):
        res = CliRunner().invoke(app, [*argv, "--prices", prices, "--json", str(out)])
        assert res.exit_code == 0, res.output
        costs[prices] = json.loads(out.read_text())["cost_usd"]
    assert costs["openai"] != costs["default"] > 0
    bad = CliRunner().invoke(app, [*argv, "--prices", "cheap"])
    assert bad.exit_code == 2 and "unknown price table 'cheap'" in bad.output
    bad = CliRunner().invoke(app, [*argv, "--profile", "gpt-9"])
    assert bad.exit_code == 2 and "unknown model profile 'gpt-9'" in bad.output
