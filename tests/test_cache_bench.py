"""`contextfold bench cache` on the real embedded engine (a short session: this machine is slow)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from contextfold.bench.cache_bench import MODES, cache_bench, scripted_session
from contextfold.cli import app
from contextfold.core.counters import resolve_counter
from contextfold.models import LocalModel


def test_session_rereads_files() -> None:
    session = scripted_session(30)
    commands = [m[0].tool_calls[0].arguments for m in session[1:]]  # type: ignore[union-attr]
    assert len(commands) == 29 and len(set(commands)) < len(commands)


@pytest.mark.embedded
@pytest.mark.slow
def test_engine_reports_evaluated_and_reused_tokens() -> None:
    results = cache_bench(lambda: LocalModel(n_threads=1), resolve_counter("smollm2"), steps=8)
    by_mode = {r.mode: r for r in results}
    assert list(by_mode) == list(MODES)
    for r in results:
        assert len(r.calls) == 7
        assert 0 < r.evaluated_tokens <= r.prompt_tokens
        assert all(reused <= prompt for prompt, reused in r.calls)
    full = by_mode["full"]
    assert full.calls[0][1] == 0  # a fresh engine has nothing cached
    assert all(reused > 0 for _, reused in full.calls[1:])  # append-only: always a hit


@pytest.mark.embedded
@pytest.mark.slow
def test_cli_writes_the_json_keys(tmp_path: Path) -> None:
    out = tmp_path / "cache.json"
    res = CliRunner().invoke(
        app, ["bench", "cache", "--steps", "4", "--threads", "1", "--json", str(out)]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert set(data) == set(MODES)
    assert all({"prompt_tokens", "evaluated_tokens"} <= set(v) for v in data.values())
