"""Sweeps on a local Ray cluster (2 workers, one per test session): ``replay --ray`` and
``bench sufficiency --ray`` give what the single-process runs give (timings aside)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from contextfold.bench.cluster import FolderChoice, ray_sweep
from contextfold.bench.replay import replay
from contextfold.cli import app
from contextfold.commands.common import ray_argv
from contextfold.core.meter import PRICE_TABLES, get_profile
from contextfold.core.tokens import ApproxCounter
from contextfold.importers import iter_trajectories
from contextfold.strategies.folding import FolderSource

pytestmark = pytest.mark.cluster

runner = CliRunner()
TIMINGS = ("render_ms_median", "render_ms_p99", "fold_ms_median")
FOLDER_CACHE = ("fold_cost_usd", "total_cost_usd")
"""What a folder's prefix cache, carried from one trajectory to the next in one process, makes
cheaper: on Ray each worker's folder starts cold (everything else is the same)."""


def _session(n_reads: int, topic: str) -> list[dict[str, object]]:
    msgs: list[dict[str, object]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": f"Fix the bug in {topic}.py."},
    ]
    for i in range(n_reads):
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": "read", "arguments": json.dumps({"path": f"{topic}{i}.py"})},
        }
        msgs.append({"role": "assistant", "content": f"reading {i}", "tool_calls": [call]})
        msgs.append({"role": "tool", "tool_call_id": f"c{i}", "content": f"{topic} = {i}\n" * 60})
    msgs.append({"role": "assistant", "content": "done"})
    return msgs


def _fixture(tmp_path: Path) -> Path:
    sessions = [_session(n, f"m{n}") for n in (2, 7, 4, 12, 1, 9)]
    lines = [json.dumps(s) for s in sessions] + ["{not json"]  # a skipped line too
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _without_timings(value: Any, drop: tuple[str, ...] = TIMINGS) -> Any:
    if isinstance(value, dict):
        return {k: _without_timings(v, drop) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [_without_timings(v, drop) for v in value]
    return value


SPECS = ["full", "window keep=2", "refold", "compact", "supersede"]


def _replay(path: Path, **extra: Any) -> dict[str, Any]:
    result = replay(
        iter_trajectories([path]),
        SPECS,
        counter=ApproxCounter(),
        profile=get_profile("qwen3-8b"),
        prices=PRICE_TABLES["default"],
        budget=600,
        hindsight=True,
        **extra,
    )
    out: dict[str, Any] = result.to_json()
    return out


def test_an_unreachable_cluster_is_a_clear_error(tmp_path: Path) -> None:
    """In a process of its own: one that has joined a cluster (this session's local one) uses
    it as is, whatever address it is given."""
    command = ["replay", str(_fixture(tmp_path)), "-s", "full", "--ray", "127.0.0.1:1"]
    done = subprocess.run(
        [sys.executable, "-c", "from contextfold.cli import app; app()", *command],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "cannot join the Ray cluster at '127.0.0.1:1'" in done.stderr
    assert "Traceback" not in done.stderr


def test_replay_on_ray_equals_the_single_process_replay(ray_cluster: None, tmp_path: Path) -> None:
    path = _fixture(tmp_path)
    alone = _replay(path, folders=FolderSource(default="scripted"))
    seen: list[str] = []
    with ray_sweep("local", workers=2) as sweep:
        swept = _replay(
            path,
            folders=FolderSource(default="scripted"),
            sweep=sweep,
            folder_choice=FolderChoice(default="scripted"),
            on_trajectory=seen.append,
        )
    model_free = ("full", "window keep=2", "refold", "supersede", "hindsight", "skipped_files")
    assert {k: _without_timings(swept[k]) for k in model_free} == {
        k: _without_timings(alone[k]) for k in model_free
    }
    ignore = TIMINGS + FOLDER_CACHE
    assert _without_timings(swept["compact"], ignore) == _without_timings(alone["compact"], ignore)
    assert [r["fold_calls"] for r in swept["compact"]["rows"]] == [
        r["fold_calls"] for r in alone["compact"]["rows"]
    ]
    assert len(alone["full"]["rows"]) == 6 and alone["full"]["skipped"] == 1
    assert len(seen) == 7  # six trajectories and the skipped line, as they finished


def test_the_replay_command_with_ray(ray_cluster: None, tmp_path: Path) -> None:
    path = _fixture(tmp_path)
    outs = []
    for extra in ([], ["--ray", "local", "--workers", "2"]):
        out = tmp_path / f"r{len(outs)}.json"
        argv = ["replay", str(path), "-s", "full", "-s", "refold", "--json", str(out), *extra]
        result = runner.invoke(app, argv)
        assert result.exit_code == 0, result.output
        outs.append(json.loads(out.read_text()))
    assert _without_timings(outs[0]) == _without_timings(outs[1])
    lone = runner.invoke(app, ["replay", str(path), "--workers", "2"])
    assert lone.exit_code != 0 and "--workers needs --ray" in lone.output


def test_a_bare_ray_flag_means_a_local_cluster(tmp_path: Path) -> None:
    assert ray_argv(["replay", "x", "--ray"]) == ["replay", "x", "--ray", "local"]
    assert ray_argv(["replay", "--ray", "--limit", "2"]) == [
        "replay",
        "--ray",
        "local",
        "--limit",
        "2",
    ]
    assert ray_argv(["replay", "--ray", str(tmp_path)]) == [
        "replay",
        "--ray",
        "local",
        str(tmp_path),
    ]
    assert ray_argv(["replay", "--ray", "head:6379", "x"]) == ["replay", "--ray", "head:6379", "x"]


@pytest.mark.tau2
@pytest.mark.slow
def test_sufficiency_on_ray_equals_the_process_run(ray_cluster: None) -> None:
    from contextfold.bench.sufficiency.runner import Setting, result_json, run_matrix

    tasks = [
        "[mobile_data_issue]airplane_mode_on|data_mode_off[PERSONA:None]",
        "[service_issue]airplane_mode_on|overdue_bill_suspension[PERSONA:None]",
    ]
    settings = [Setting("full", 16000), Setting("window keep=1", 8000, True)]
    alone = run_matrix("telecom", tasks, settings, workers=1)
    done: list[str] = []
    with ray_sweep("local", workers=2) as sweep:
        swept = run_matrix("telecom", tasks, settings, sweep=sweep, on_task=done.append)
    assert [_without_timings(result_json(r)) for r in swept] == [
        _without_timings(result_json(r)) for r in alone
    ]
    assert sorted(done) == sorted(tasks)
