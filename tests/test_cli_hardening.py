"""Careless and hostile arguments to the batch commands: clear errors before any work, nothing
finished thrown away, skipped input named and counted, tables that fit 80 columns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from contextfold.bench.replay import replay
from contextfold.bench.report import replay_table
from contextfold.bench.sufficiency.table import sufficiency_table
from contextfold.cli import app
from contextfold.core.meter import PRICE_TABLES, get_profile
from contextfold.core.tokens import ApproxCounter
from contextfold.importers import iter_trajectories
from tests.test_replay import coding_session, write_jsonl

runner = CliRunner()
UNWRITABLE = "no-such-folder/out.json"


def _replay(paths: list[Path], specs: list[str]) -> Any:
    return replay(
        iter_trajectories(paths),
        specs,
        counter=ApproxCounter(),
        profile=get_profile("qwen3-8b"),
        prices=PRICE_TABLES["default"],
    )


def _strict(text: str) -> Any:
    def refuse(name: str) -> None:
        raise ValueError(f"not JSON: {name}")

    return json.loads(text, parse_constant=refuse)


# --- defect 5: --json checked before the work -------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", "{data}"],
        ["run", "--env", "tutorial:budget", "--model", "openai:none"],
        ["bench", "cache", "--steps", "2"],
        ["bench", "sufficiency", "--domain", "airline"],
    ],
)
def test_an_unwritable_json_path_fails_before_any_work(tmp_path: Path, argv: list[str]) -> None:
    data = write_jsonl(tmp_path / "runs.jsonl", [coding_session(1)])
    argv = [a.replace("{data}", str(data)) for a in argv]
    res = runner.invoke(app, [*argv, "--json", str(tmp_path / UNWRITABLE)])
    assert res.exit_code == 2, res.output
    assert "cannot be written" in res.output and "nothing has run yet" in res.output
    assert not isinstance(res.exception, Exception) or isinstance(res.exception, SystemExit)


def test_a_json_path_that_fails_at_the_end_prints_the_results(tmp_path: Path) -> None:
    from contextfold.bench.output import save_json

    out, err = Console(record=True, width=200), Console(record=True, width=200)
    assert not save_json(tmp_path / UNWRITABLE, {"reward": 1.0}, out=out, err=err)
    assert "cannot write" in err.export_text() and '"reward": 1.0' in out.export_text()


# --- defect 6: empty trajectories -------------------------------------------------------------


def test_empty_trajectories_are_skipped_with_a_message(tmp_path: Path) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", [coding_session(3)])
    alone = _replay([good], ["full"]).strategies["full"].summary()
    empty = tmp_path / "empty.jsonl"
    empty.write_text('[]\n[{"role": "user", "content": "hi"}]\n')
    result = _replay([good, empty], ["full"])
    summary = result.strategies["full"].summary()
    assert summary["trajectories"] == 1 and summary["skipped"] == 2
    assert summary["peak_context_tokens_mean"] == alone["peak_context_tokens_mean"]
    assert all("empty trajectory" in e for e in result.import_errors)


# --- defect 8: a blank strategy ---------------------------------------------------------------


@pytest.mark.parametrize(
    "command", [["replay", "{data}"], ["bench", "sufficiency", "--domain", "airline"]]
)
def test_a_blank_strategy_is_a_clear_error(tmp_path: Path, command: list[str]) -> None:
    data = write_jsonl(tmp_path / "runs.jsonl", [coding_session(1)])
    argv = [a.replace("{data}", str(data)) for a in command]
    res = runner.invoke(app, [*argv, "-s", ""])
    assert res.exit_code == 2 and "empty spec" in res.output
    assert isinstance(res.exception, SystemExit)


# --- defect 9: the smaller ones ---------------------------------------------------------------


def test_nan_rewards_are_written_as_null(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps({"messages": coding_session(1), "outcome": float("nan")}) + "\n")
    out = tmp_path / "out.json"
    res = runner.invoke(app, ["replay", str(path), "--tokenizer", "approx", "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert _strict(out.read_text())["full"]["rows"][0]["outcome"] is None


def test_every_skipped_file_is_counted_and_listed_in_json(tmp_path: Path) -> None:
    for i in range(12):
        (tmp_path / f"bad{i:02}.traj.json").write_text('{"messages": [')
    write_jsonl(tmp_path / "good.jsonl", [coding_session(1)])
    out = tmp_path / "out.json"
    res = runner.invoke(app, ["replay", str(tmp_path), "--tokenizer", "approx", "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert "... and 2 more" in res.output and "1 trajectory," in res.output
    data = _strict(out.read_text())
    assert len(data["skipped_files"]) == 12 and data["full"]["skipped"] == 12
    first = data["skipped_files"][0]
    assert first["path"].endswith("bad00.traj.json") and "invalid JSON" in first["reason"]


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", "{data}", "--budget", "0"],
        ["run", "--env", "tutorial:budget", "--max-steps", "0"],
        ["run", "--env", "tutorial:budget", "--budget", "-5"],
        ["bench", "sufficiency", "--domain", "airline", "--budget", "0"],
    ],
)
def test_budgets_and_step_caps_below_one_are_refused(tmp_path: Path, argv: list[str]) -> None:
    data = write_jsonl(tmp_path / "runs.jsonl", [coding_session(1)])
    res = runner.invoke(app, [a.replace("{data}", str(data)) for a in argv])
    assert res.exit_code == 2 and "greater than or equal to 1" in res.output


def test_a_folder_without_trajectories_warns_and_fails(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("nothing here")
    res = runner.invoke(app, ["replay", str(tmp_path), "--tokenizer", "approx"])
    assert res.exit_code == 1 and "no trajectories to replay" in res.output


# --- first run: tables that fit 80 columns ----------------------------------------------------

SPECS = ["full", "window", "clip", "mask reversible=true", "chain strategies=[supersede,mask]"]


def _render(table: Any, width: int) -> str:
    console = Console(width=width, record=True)
    console.print(table)
    return console.export_text()


def _fits(text: str, width: int) -> None:
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= width


def test_the_replay_table_fits_80_columns_and_is_complete_when_wide(tmp_path: Path) -> None:
    big = write_jsonl(tmp_path / "runs.jsonl", [coding_session(60)] * 30)
    result = _replay([big], SPECS)
    narrow = _render(replay_table(result, width=80), 80)
    _fits(narrow, 80)
    assert "prompt tokens" in narrow and "cost $" in narrow and "reuse" in narrow
    assert "strategies=[supersede" in narrow  # labels are text, not markup
    wide = _render(replay_table(result, width=160), 160)
    _fits(wide, 160)
    assert "KV at peak" in wide and "ms p99" in wide and "peak ctx" in wide


def test_the_sufficiency_table_fits_80_columns() -> None:
    row: dict[str, object] = {
        "strategy": "chain strategies=[supersede,mask,refold]",
        "budget": 64000,
        "noisy": True,
        "tasks": 50,
        "reward_mean": 0.873,
        "redundant_calls": 12.25,
        "lost_user_values": 0.25,
        "lost_tool_values": 10.5,
        "refetched_values": 11.75,
        "steps": 31.5,
        "prompt_tokens": 12_345_678,
        "peak_context_tokens": 65_432,
        "forced_compactions": 1.25,
        "cost_usd": 123.4567,
        "fold_calls": 3.0,
        "fold_prompt_tokens": 9000.0,
        "fold_completion_tokens": 700.0,
        "fold_cost_usd": 0.0712,
        "fold_rejected": 0.5,
        "fold_ms_median": 1234.0,
        "total_cost_usd": 123.5279,
    }
    narrow = _render(sufficiency_table([row, row], [], title="sufficiency", width=80), 80)
    _fits(narrow, 80)
    assert "reward" in narrow and "12,345,678" in narrow and "123.5279" in narrow
    wide = _render(sufficiency_table([row], [], title="sufficiency", width=200), 200)
    assert "over budget" in wide and "peak ctx" in wide and "…" not in wide
    assert "lost" in wide and "fetch" in wide and "10.50" in wide
