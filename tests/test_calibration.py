"""The meter agrees with the bill: each provider's cache rule, the prompt counted as the provider
counts it, a session's counter calibrated by its log's bill, and replay's full as billed beside
the simulated full (hand-made logs whose bills a test provider computes rule by rule)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from contextfold.bench.billed import session_billing
from contextfold.bench.stepping import replay_one
from contextfold.cli import app
from contextfold.core.billing import BilledUsage
from contextfold.core.caches import VLLM, cache_rule, simulated_usage
from contextfold.core.calibration import Calibration, Counting, calibrate
from contextfold.core.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from contextfold.core.meter import PRICE_TABLES, get_profile
from contextfold.core.parts import Part
from contextfold.core.tokens import ApproxCounter
from contextfold.importers import Trajectory, iter_trajectories
from contextfold.strategies.registry import build_strategy
from tests._billed_logs import Provider, Step, billed_session

runner = CliRunner()
BODY = "x = compute(values)  # a line of the file\n" * 190  # about 2,000 tokens
MEASURES = ("prompt_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd")


def test_vllm_blocks_stay_the_meters_rule() -> None:
    assert simulated_usage(80, 50, 7) == BilledUsage(0, 48, 32, 0, 7)
    assert simulated_usage(50, 0, 5) == BilledUsage(2, 0, 48, 0, 5)
    assert cache_rule(None) == VLLM == cache_rule("my-finetune")


def test_anthropic_caches_exactly_to_the_breakpoint_never_below_its_minimum() -> None:
    sonnet, haiku = cache_rule("claude-sonnet-4-5"), cache_rule("claude-haiku-4-5")
    assert simulated_usage(5_000, 3_333, 9, rule=sonnet) == BilledUsage(0, 3_333, 1_667, 0, 9)
    assert simulated_usage(900, 0, 1, rule=sonnet) == BilledUsage(900, 0, 0, 0, 1)
    assert simulated_usage(3_000, 0, 1, rule=haiku) == BilledUsage(3_000, 0, 0, 0, 1)
    assert sonnet.bill(5_000, 1, read=4_000, tail=10, hour=0.5) == BilledUsage(
        10, 4_000, 495, 495, 1
    )
    assert sonnet.alive(299.0) and not sonnet.alive(301.0) and sonnet.alive(None)
    assert cache_rule("claude-opus-4-8", hour=True).alive(3_000.0)


def test_openai_caches_from_1024_tokens_in_steps_of_128_and_bills_no_writes() -> None:
    rule = cache_rule("gpt-5.1-codex")
    assert simulated_usage(5_000, 2_000, 3, rule=rule) == BilledUsage(3_080, 1_920, 0, 0, 3)
    assert simulated_usage(5_000, 1_000, 3, rule=rule) == BilledUsage(5_000, 0, 0, 0, 3)


def test_calibration_finds_the_unlogged_prefix_and_the_scale() -> None:
    counted = [300.0 + 500 * k for k in range(60)]  # the logged messages, as counted
    billed = [BilledUsage(10, 0, round(20_000 + 1.4 * m) - 10, 0, 5) for m in counted]
    cal = calibrate(counted, billed)
    assert cal.prefix == pytest.approx(20_000, abs=30) and cal.scale == pytest.approx(
        1.4, abs=0.005
    )
    assert cal.tail == 10 and cal.prefix_read == 0 and cal.hour == 0.0
    short = calibrate(
        [300.0, 400.0], [BilledUsage(0, 0, 9_000, 0, 1), BilledUsage(0, 0, 9_400, 0, 1)]
    )
    assert short.scale == pytest.approx(1.06, abs=0.01)  # two calls: mostly the counter's own
    assert calibrate([], []) == Calibration()


def test_only_the_last_turns_thinking_counts_where_the_model_keeps_no_more() -> None:
    thought = Part.of("anthropic:layout", {}, text="t" * 400)  # 100 tokens of thinking
    reply = AssistantMessage("a", tool_calls=(ToolCall("c", "f"),), parts=(thought,))
    messages = [UserMessage("q"), reply, ToolMessage("r", tool_call_id="c"), UserMessage("q2")]
    tokens = [5, 120, 5, 5]
    last = Counting(ApproxCounter(), "last", Calibration(thinking=1.5))
    assert last.counts(messages, tokens) == [5, 20, 5, 5]  # before the last user message: none
    assert last.counts(messages[:3], tokens[:3]) == [5, 170, 5]  # its own turn: weighted
    kept = Counting(ApproxCounter(), "all", Calibration(thinking=1.5))
    assert kept.counts(messages, tokens) == [5, 170, 5, 5]
    assert Counting().counts(messages, tokens) == tokens


def _steps(n: int = 40, **changes: Any) -> list[Step]:
    steps = [Step(BODY, thought="Read the next file. " * 20) for _ in range(n)]
    for k, step in changes.items():
        steps[int(k[1:])] = step
    return steps


def _replay(path: Path, *strategies: str, tmp: Path) -> dict[str, Any]:
    out = tmp / "replayed.json"
    args = ["replay", str(path), "--json", str(out)]
    for strategy in strategies or ("full",):
        args += ["-s", strategy]
    done = runner.invoke(app, args, env={"COLUMNS": "80"})
    assert done.exit_code == 0, done.output
    assert all(len(line) <= 80 for line in done.output.splitlines() if str(tmp) not in line)
    return json.loads(out.read_text())


@pytest.mark.parametrize(
    "provider",
    [
        Provider(),
        Provider(model="claude-opus-4-8", keeps_last_turn_only=False, scale=1.3, prefix=12_000),
    ],
)
def test_the_calibrated_replay_of_full_gives_the_bill_back(
    tmp_path: Path, provider: Provider
) -> None:
    """Two user turns (the first turn's thinking dropped from the second's prompts where the
    model keeps only the last turn's), a gap of 10 minutes (the cache entry gone), streamed
    replies without a final output count."""
    steps = _steps(
        s20=Step(BODY, user="Now the tests.", thought="Plan the tests. " * 30),
        s30=Step(BODY, gap=600.0),
        s31=Step(BODY, final=False),
    )
    bills = billed_session(tmp_path / "s.jsonl", steps, provider)
    billed = _replay(tmp_path / "s.jsonl", tmp=tmp_path)["billed"]
    assert billed["billed"]["prompt_tokens"] == sum(b.prompt_tokens for b in bills)
    assert billed["billed"]["cache_read_tokens"] == sum(b.cache_read_tokens for b in bills)
    for key in MEASURES:
        assert billed["full"][key] == pytest.approx(billed["billed"][key], rel=0.005), key
    assert billed["full"]["output_tokens"] == billed["billed"]["output_tokens"]
    assert billed["final_outputs"] == len(steps) - 1


def test_the_final_output_counts_are_the_ones_billed(tmp_path: Path) -> None:
    provider = Provider(outputs=[777] * 40)
    billed_session(tmp_path / "s.jsonl", _steps(), provider)
    data = _replay(tmp_path / "s.jsonl", tmp=tmp_path)
    assert data["billed"]["billed"]["output_tokens"] == 777 * 40
    assert data["full"]["rows"][0]["completion_tokens"] == 777 * 40


def test_every_strategy_of_a_session_is_measured_by_its_one_calibrated_counter(
    tmp_path: Path,
) -> None:
    """clip leaves results up to 1,000 characters whole: on such a session its views are
    full's, and so is every figure; on one of long results it sends less, behind the same
    unlogged prefix at every call."""
    short = [Step("a short result " * 30) for _ in range(30)]
    billed_session(tmp_path / "short.jsonl", short, Provider())
    data = _replay(tmp_path / "short.jsonl", "full", "clip", tmp=tmp_path)
    [full], [clip] = data["full"]["rows"], data["clip"]["rows"]
    for key in ("prompt_tokens", "cost_usd", "cache_read_tokens", "cache_write_tokens"):
        assert clip[key] == full[key]
    billed_session(tmp_path / "long.jsonl", _steps(30), Provider())
    [t] = list(iter_trajectories([tmp_path / "long.jsonl"]))
    assert isinstance(t, Trajectory)
    counter = ApproxCounter()
    billing = session_billing(t, t.counted_steps(counter), counter)
    meters = [
        billing.meter(PRICE_TABLES["default"], get_profile("qwen3-8b"), counter) for _ in "ab"
    ]
    assert meters[0].counting.calibration is meters[1].counting.calibration is billing.calibration
    data = _replay(tmp_path / "long.jsonl", "full", "clip", tmp=tmp_path)
    [full], [clip] = data["full"]["rows"], data["clip"]["rows"]
    assert clip["prompt_tokens"] < full["prompt_tokens"]
    assert clip["prompt_tokens"] > 30 * billing.calibration.prefix > 0


def test_a_session_named_by_its_model_is_priced_in_its_dollars(tmp_path: Path) -> None:
    billed_session(tmp_path / "s.jsonl", _steps(5), Provider())
    data = _replay(tmp_path / "s.jsonl", tmp=tmp_path)
    [row] = data["full"]["rows"]
    assert row["model"] == "claude-sonnet-4-5-20250929"
    assert row["cost_usd"] == pytest.approx(data["billed"]["full"]["cost_usd"])  # $3 / $15


def test_savings_of_a_replay_says_what_the_sessions_cost_as_billed(tmp_path: Path) -> None:
    billed_session(tmp_path / "s.jsonl", _steps(12), Provider())
    out = tmp_path / "replayed.json"
    _replay(tmp_path / "s.jsonl", "full", "clip", tmp=tmp_path)
    shown = runner.invoke(app, ["savings", str(out)], env={"COLUMNS": "80"})
    assert shown.exit_code == 0, shown.output
    assert "as billed in the logs: 1 session cost $" in shown.output
    saved = tmp_path / "savings.json"
    runner.invoke(app, ["savings", str(out), "--json", str(saved)])
    [session] = json.loads(saved.read_text())["sessions"]
    assert session["logged_usd"] == pytest.approx(
        json.loads(out.read_text())["billed"]["billed"]["cost_usd"]
    )


def test_a_strategy_is_told_the_prompt_the_log_leaves_out(tmp_path: Path) -> None:
    """Replay tells the strategy the unlogged prefix's size in its counter's tokens
    (``History.unseen_tokens``), as serve shows a client's system prompt: never its text."""
    billed_session(tmp_path / "s.jsonl", _steps(8), Provider(scale=1.3, prefix=12_000))
    [t] = list(iter_trajectories([tmp_path / "s.jsonl"]))
    assert isinstance(t, Trajectory) and t.system is None
    counter = ApproxCounter()
    steps = t.counted_steps(counter)
    billing = session_billing(t, steps, counter)
    meter = billing.meter(PRICE_TABLES["default"], get_profile("qwen3-8b"), counter)
    history = replay_one(t, steps, build_strategy("refold"), meter, counter=counter)
    cal = billing.calibration
    assert history.unseen_tokens == round(cal.prefix / cal.scale) == meter.unseen_tokens
    assert 12_000 / 1.3 * 0.95 < history.unseen_tokens < 12_000 / 1.3 * 1.05
    assert history.system is None
