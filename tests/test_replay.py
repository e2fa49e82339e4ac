"""The replay harness end to end on small fixtures written here, and the CLI around it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from contextfold.bench.replay import SUMMARY_KEYS, replay
from contextfold.cli import app
from contextfold.core.errors import ImportFormatError
from contextfold.core.meter import PRICE_TABLES, get_profile
from contextfold.core.tokens import ApproxCounter
from contextfold.importers import iter_trajectories
from contextfold.importers.base import Trajectory
from contextfold.strategies.restore import RESTORE_LINES_TOOL, with_part

runner = CliRunner()


def coding_session(n_reads: int) -> list[dict[str, object]]:
    msgs: list[dict[str, object]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the bug in a.py."},
    ]
    for i in range(n_reads):
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": "read", "arguments": '{"path": "a.py"}'},
        }
        msgs.append({"role": "assistant", "content": f"reading {i}", "tool_calls": [call]})
        msgs.append({"role": "tool", "tool_call_id": f"c{i}", "content": "x = 1\n" * 40})
    msgs.append({"role": "assistant", "content": "done"})
    return msgs


def write_jsonl(path: Path, sessions: list[list[dict[str, object]]]) -> Path:
    path.write_text("".join(json.dumps(s) + "\n" for s in sessions))
    return path


def test_replay_meters_every_assistant_step(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "runs.jsonl", [coding_session(3), coding_session(5)])
    result = replay(
        iter_trajectories([path]),
        ["full"],
        counter=ApproxCounter(),
        profile=get_profile("qwen3-8b"),
        prices=PRICE_TABLES["default"],
    )
    res = result.strategies["full"]
    assert [r["calls"] for r in res.rows] == [4, 6]  # one call per recorded assistant step
    assert len(res.render_ns) == 10
    summary = res.summary()
    assert tuple(summary) == SUMMARY_KEYS
    assert summary["trajectories"] == 2 and summary["skipped"] == 0
    assert summary["removed_tokens"] == summary["unrecoverable_tokens"] == 0
    # full history only appends: each call reuses the previous prompt, in whole 16-token blocks
    assert 0.5 < summary["prefix_cache_reuse"] < 1
    row = res.rows[1]
    assert (
        row["kv_bytes_peak"]
        == row["peak_context_tokens"] * get_profile("qwen3-8b").kv_bytes_per_token
    )


def test_first_prompt_is_system_plus_task(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "one.jsonl", [coding_session(1)])
    [traj] = [t for t in iter_trajectories([path]) if isinstance(t, Trajectory)]
    counter = ApproxCounter()
    steps = traj.counted_steps(counter)
    result = replay(
        [traj],
        ["full"],
        counter=counter,
        profile=get_profile("qwen3-8b"),
        prices=PRICE_TABLES["default"],
    )
    row = result.strategies["full"].rows[0]
    history = traj.to_history(counter)
    first_prompt = history.system_tokens + steps[0].total_tokens
    last_prompt = history.system_tokens + sum(s.total_tokens for s in steps[:-1])
    assert row["prompt_tokens"] == first_prompt + last_prompt
    assert row["peak_context_tokens"] == last_prompt


def test_malformed_input_is_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(
        json.dumps(coding_session(2)) + "\n{not json\n" + json.dumps(coding_session(1)) + "\n"
    )
    items = list(iter_trajectories([path]))
    assert sum(isinstance(i, ImportFormatError) for i in items) == 1
    result = replay(
        items,
        ["full"],
        counter=ApproxCounter(),
        profile=get_profile("qwen3-8b"),
        prices=PRICE_TABLES["default"],
    )
    assert result.strategies["full"].summary()["skipped"] == 1
    assert len(result.strategies["full"].rows) == 2
    assert "line 2" in result.import_errors[0]


def test_cli_replay_writes_the_json_keys(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "runs.jsonl", [coding_session(2)])
    out = tmp_path / "out.json"
    res = runner.invoke(app, ["replay", str(path), "--strategy", "full", "--json", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert list(data) == ["full", "skipped_files"]
    assert set(data["full"]) == {*SUMMARY_KEYS, "rows"}
    assert data["full"]["trajectories"] == 1
    assert "prompt tokens" in res.output
    # full's cost split by what it pays for, in the JSON and under the table
    full = data["full"]
    split = [full[k] for k in ("cost_output_usd", "cost_read_usd", "cost_write_usd")]
    assert sum(split) + full["cost_input_usd"] == pytest.approx(full["cost_usd"])
    output = full["cost_output_usd"] / full["cost_usd"]
    assert f"full's cost: output {output:.1%}, cache reads" in " ".join(res.output.split())


def test_cli_reports_bad_arguments(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["replay", str(tmp_path / "nothing.json")])
    assert missing.exit_code == 2 and "does not exist" in missing.output
    path = write_jsonl(tmp_path / "runs.jsonl", [coding_session(1)])
    bad = runner.invoke(app, ["replay", str(path), "--strategy", "nope"])
    assert bad.exit_code == 2 and "unknown strategy 'nope'" in bad.output
    prof = runner.invoke(app, ["replay", str(path), "--model-profile", "gpt-9"])
    assert prof.exit_code == 2 and "unknown model profile" in prof.output


def test_tool_schemas_are_paid_by_the_strategies_that_offer_tools(tmp_path: Path) -> None:
    """``--tool-schemas``: refold's prompts carry ``restore``'s schema (with its line range
    and its ``part`` option) at every call, full's carry nothing more."""
    path = write_jsonl(tmp_path / "runs.jsonl", [coding_session(4)])
    runs = {
        counted: replay(
            iter_trajectories([path]),
            ["full", "refold"],
            counter=ApproxCounter(),
            profile=get_profile("qwen3-8b"),
            prices=PRICE_TABLES["default"],
            tool_schemas=counted,
        ).strategies
        for counted in (False, True)
    }
    tokens = {c: {k: r.summary()["prompt_tokens"] for k, r in s.items()} for c, s in runs.items()}
    assert tokens[True]["full"] == tokens[False]["full"]
    schema = ApproxCounter().count_batch([json.dumps([with_part(RESTORE_LINES_TOOL)])])[0]
    assert tokens[True]["refold"] - tokens[False]["refold"] == 5 * schema  # 5 calls
    res = runner.invoke(app, ["replay", str(path), "-s", "refold", "--tool-schemas"])
    assert res.exit_code == 0, res.output


def test_by_source_splits_the_results_by_file(tmp_path: Path) -> None:
    """``--by-source``: each file's trajectories on their own, adding up to the whole."""
    short = write_jsonl(tmp_path / "short.jsonl", [coding_session(1), coding_session(2)])
    long = write_jsonl(tmp_path / "long.jsonl", [coding_session(8)])
    result = replay(
        iter_trajectories([short, long]),
        ["full", "refold"],
        counter=ApproxCounter(),
        profile=get_profile("qwen3-8b"),
        prices=PRICE_TABLES["default"],
    )
    parts = result.by_source()
    assert [Path(s).name for s in parts] == ["short.jsonl", "long.jsonl"]
    for label, whole in result.strategies.items():
        counts = [p.strategies[label].summary()["trajectories"] for p in parts.values()]
        assert counts == [2, 1]
        for key in ("prompt_tokens", "cost_usd"):
            total = sum(p.strategies[label].summary()[key] for p in parts.values())
            assert total == pytest.approx(whole.summary()[key])
    res = runner.invoke(app, ["replay", str(tmp_path), "-s", "full", "--by-source"])
    assert res.exit_code == 0, res.output
    assert "short.jsonl: 2 trajectories" in res.output
    assert "long.jsonl: 1 trajectory" in res.output
