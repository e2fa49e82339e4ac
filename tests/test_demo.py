"""``contextfold demo``: the model-free part (the bundled samples replayed, every column
explained once, the verdict) and, with the embedded model, the live part's tool calls."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from contextfold.bench.report import short_count
from contextfold.bench.verdict import verdict
from contextfold.cli import app

runner = CliRunner()
HEADERS = ("prompt tokens", "cost $", "openai $", "reuse", "removed", "unrecov.")
SAMPLE = Path(str(resources.files("contextfold") / "data"))


def _demo(*args: str) -> str:
    res = runner.invoke(app, ["demo", "--no-live", *args])
    assert res.exit_code == 0, res.output
    return res.output


def _sections(output: str) -> tuple[str, str, str]:
    """The table (from its header row), the legend and the verdict."""
    head = output.index("strategy  ")
    legend = output.index("\nprompt tokens ", head)
    end = output.index("\nVerdict\n", legend)
    return output[head:legend], output[legend:end], output[end:]


def test_the_demo_replays_the_samples_explains_every_column_and_ends_with_a_verdict() -> None:
    out = _demo()
    assert out.startswith("contextfold keeps an agent's history whole")
    assert "2 sessions, profile qwen3-8b" in out
    table, legend, said = _sections(out)
    for name in ("full", "window", "clip", "mask", "supersede", "refold"):
        assert f"\n{name} " in table
    for header in HEADERS:
        assert header in table
        explained = [line for line in legend.splitlines() if line.startswith(header + " ")]
        assert len(explained) == 1, header
    lines = [line for line in said.splitlines() if line.startswith("- ")]
    assert lines[0] == "- refold sent the fewest prompt tokens: 19.1k, 0.77x of full."
    assert lines[1].startswith("- The cheapest depends on the prices: clip at the default prices")
    assert "It lost nothing for good" in said
    assert "window, clip and mask drop what they leave out for good" in said
    assert "Live" not in out
    assert max(len(line) for line in out.splitlines()) <= 80 and "…" not in out


def test_the_demo_shows_what_replay_shows_for_the_same_sample(tmp_path: Path) -> None:
    """The same default profile and tokenizer: full's prompt tokens and cost agree."""
    path = tmp_path / "replay.json"
    res = runner.invoke(app, ["replay", str(SAMPLE), "-s", "full", "--json", str(path)])
    assert res.exit_code == 0, res.output
    full = json.loads(path.read_text())["full"]
    row = next(line for line in _demo().splitlines() if line.startswith("full "))
    assert short_count(full["prompt_tokens"]) in row and f"{full['cost_usd']:.4f}" in row


def test_full_joins_the_strategies_it_was_not_given() -> None:
    table, _legend, said = _sections(_demo("-s", "refold"))
    assert "\nfull " in table and "\nrefold " in table
    assert "refold sent the fewest prompt tokens" in said


def test_a_bad_strategy_is_a_clear_error() -> None:
    res = runner.invoke(app, ["demo", "--no-live", "-s", "nope"])
    assert res.exit_code == 2 and "unknown strategy 'nope'" in res.output


def _summary(tokens: int, cost: float, **extra: Any) -> dict[str, Any]:
    base = {
        "prompt_tokens": tokens,
        "total_cost_usd": cost,
        "removed_tokens": 0,
        "unrecoverable_tokens": 0,
        "args_restorable": 0.0,
        "args_lost": 0.0,
    }
    return {**base, **extra}


def test_the_verdict_names_a_lossy_winner_and_a_split_on_prices() -> None:
    default = {
        "full": _summary(1000, 1.0),
        "window": _summary(500, 0.8, removed_tokens=600, unrecoverable_tokens=600),
        "refold": _summary(700, 0.7, removed_tokens=300),
    }
    openai = {**default, "window": _summary(500, 0.5), "refold": _summary(700, 0.6)}
    lines = verdict({"default": default, "openai": openai})
    assert lines[0] == "window sent the fewest prompt tokens: 500, 0.50x of full."
    assert lines[1] == (
        "The cheapest depends on the prices: refold at the default prices, window at OpenAI's."
    )
    assert lines[2].startswith("It lost 600 of the 600 tokens it left out for good")
    assert len(lines) == 3  # no other strategy lost anything or cost more than full


def test_the_verdict_says_when_cutting_costs_more_than_it_saves() -> None:
    default = {
        "full": _summary(1000, 1.0),
        "window": _summary(900, 1.3, removed_tokens=100, unrecoverable_tokens=100),
    }
    lines = verdict({"default": default, "openai": default})
    assert lines[1] == "full itself cost the least: every cut cost more than it saved."
    assert lines[3].startswith("window sent fewer tokens than full yet cost more")
    only = verdict({"default": {"full": _summary(1000, 1.0)}})
    assert only == ["Only full ran: there is nothing to compare it with."]
    with pytest.raises(ValueError, match="full"):
        verdict({"default": {"refold": _summary(1, 1.0)}})


@pytest.mark.slow
@pytest.mark.embedded
def test_the_live_part_shows_the_models_tool_calls() -> None:
    res = runner.invoke(app, ["demo", "-s", "refold", "--max-steps", "2", "--threads", "1"])
    assert res.exit_code == 0, res.output
    live = res.output[res.output.index("2. Live") : res.output.index("\nVerdict\n")]
    loading, loaded = live.index("loading the embedded model"), live.index("\nloaded in ")
    assert loading < loaded < live.index("task:")  # said before the first step's long wait
    assert "shows the machinery (tool calls, views, metering), not skill" in live
    assert "  [1] calculator(" in live and "  [2] calculator(" in live
    assert "- Live, the embedded model made 2 tool calls in 2 steps" in res.output
