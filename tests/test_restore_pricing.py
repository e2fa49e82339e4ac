"""Restore pricing in replay, on sessions written here whose restores are known by construction."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from contextfold.bench.availability import ArgIndex, ArgTally
from contextfold.bench.replay import ReplayResult, replay, replay_one
from contextfold.bench.restores import RestorePricing
from contextfold.cli import app
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from contextfold.core.meter import PRICE_TABLES, Meter, get_profile
from contextfold.core.tokens import ApproxCounter
from contextfold.importers.base import Trajectory
from contextfold.strategies.registry import build_strategy
from tests.test_availability import FILLER, call, step

ORDERS = '{"orders": ["#W1234567", "#W7654321"]}'
ORDER = '{"item_id": "ITEM_998877", "price": 41.64}'


def session(*, again: bool = False) -> Trajectory:
    """The refund at step 7 needs the order id (step 1's output) and the item id and price
    (step 2's); four fillers come between. With ``again``, step 8 looks the order up again."""
    steps: list[tuple[Message, ...]] = [
        (UserMessage("Please refund the lamp for user mia_li_3668."),),
        step(1, "get_user", ORDERS, user_id="mia_li_3668"),
        step(2, "get_order", ORDER, order_id="#W7654321"),
    ]
    steps += [step(3 + i, "browse", FILLER, page=f"page-{i}") for i in range(4)]
    refund = call(7, "refund", order_id="#W7654321", item_id="ITEM_998877", amount=41.64)
    steps.append((AssistantMessage(None, tool_calls=(refund,)), ToolMessage("refunded", "c7")))
    if again:
        steps.append(step(8, "get_order", ORDER, order_id="#W7654321"))
    return Trajectory("t", "test", SystemMessage("You are a store agent."), tuple(steps))


def run(specs: list[str], traj: Trajectory, *, priced: bool = True) -> ReplayResult:
    return replay(
        [traj],
        specs,
        counter=ApproxCounter(),
        profile=get_profile("qwen3-8b"),
        prices=PRICE_TABLES["default"],
        price_restores=priced,
    )


MASK = "mask keep=1 reversible=true"


def test_full_restores_nothing_and_pricing_changes_none_of_its_figures() -> None:
    priced, plain = (run(["full"], session(), priced=p).strategies["full"] for p in (True, False))
    timing = {"render_ms_median", "render_ms_p99"}
    p, q = ({k: v for k, v in r.summary().items() if k not in timing} for r in (priced, plain))
    assert p == q
    assert (p["restores"], p["restore_cost_usd"]) == (0, 0.0)


def test_a_restorable_need_costs_one_call_that_restores_the_steps_holding_it() -> None:
    counter = ApproxCounter()
    traj = session()
    steps = traj.counted_steps(counter)
    pricing = RestorePricing(ArgTally(ArgIndex.build(traj.system, steps)))
    meter = Meter(prices=PRICE_TABLES["default"])
    strategy = build_strategy(MASK)
    history = replay_one(traj, steps, strategy, meter, counter=counter, restores=pricing)
    # one restore, before the refund: steps 1 (the order id) and 2 (item id and price)
    assert pricing.calls == 1 and len(history) == len(steps) + 1
    restore = history[7]
    head = restore.message
    assert isinstance(head, AssistantMessage)
    assert [(c.name, json.loads(c.arguments)) for c in head.tool_calls] == [
        ("restore", {"step": 1}),
        ("restore", {"step": 2}),
    ]
    assert [r.content for r in restore.results] == [ORDERS, ORDER]
    assert history[8].messages == steps[7].messages  # the refund, one place later


def looked_up_twice() -> Trajectory:
    """The user's orders are looked up twice (steps 1 and 3) and the second answer no longer
    lists #W7654321, which the refund at step 4 uses: ``supersede`` shows step 1 as a pointer
    to step 3, and only restoring step 1 gives the id back."""
    steps: list[tuple[Message, ...]] = [
        (UserMessage("Please refund the lamp for user mia_li_3668."),),
        step(1, "get_user", ORDERS, user_id="mia_li_3668"),
        step(2, "browse", FILLER, page="page-0"),
        step(3, "get_user", '{"orders": ["#W1234567"]}', user_id="mia_li_3668"),
        step(4, "refund", "refunded", order_id="#W7654321"),
    ]
    return Trajectory("s", "test", SystemMessage("You are a store agent."), tuple(steps))


def test_the_restore_call_sends_the_view_and_the_next_call_adds_the_restore_step() -> None:
    """``supersede`` changes nothing else when a restore comes: the refund's call sends the
    view the restore call sent, then the restore step."""
    counter = ApproxCounter()
    traj = looked_up_twice()
    steps = traj.counted_steps(counter)
    pricing = RestorePricing(ArgTally(ArgIndex.build(traj.system, steps)))
    meter, plain = Meter(prices=PRICE_TABLES["default"]), Meter(prices=PRICE_TABLES["default"])
    history = replay_one(
        traj, steps, build_strategy("supersede"), meter, counter=counter, restores=pricing
    )
    replay_one(traj, steps, build_strategy("supersede"), plain, counter=counter)
    restore = history[4]
    assert [json.loads(c.arguments) for c in restore.message.tool_calls] == [{"step": 1}]
    assert len(meter.calls) == len(plain.calls) + 1 == 5
    assert [replace(c, render_ns=0) for c in meter.calls[:3]] == [
        replace(c, render_ns=0) for c in plain.calls[:3]
    ]
    before, restoring, after = plain.calls[-1], meter.calls[-2], meter.calls[-1]
    assert (restoring.prompt_tokens, restoring.reused_tokens) == (
        before.prompt_tokens,
        before.reused_tokens,
    )
    assert restoring.completion_tokens == restore.tokens[0]
    price = PRICE_TABLES["default"].output / 1e6
    delta = (before.completion_tokens - restoring.completion_tokens) * price
    assert pricing.cost_usd == restoring.cost_usd
    assert abs(restoring.cost_usd - (before.cost_usd - delta)) < 1e-12
    assert after.prompt_tokens == before.prompt_tokens + restore.total_tokens
    assert after.reused_tokens == before.prompt_tokens // 16 * 16  # the prefix it extends


def test_replay_reports_restores_and_their_cost_and_keeps_the_args_figures() -> None:
    priced, plain = (run(["full", MASK], session(), priced=p).strategies[MASK] for p in (1, 0))
    p, q = priced.summary(), plain.summary()
    assert (p["restores"], q["restores"], q["restore_cost_usd"]) == (1, 0, 0.0)
    assert p["restore_cost_usd"] > 0
    assert p["prompt_tokens"] > q["prompt_tokens"]  # the restore call's prompt counts too
    for key in ("args_needed", "args_in_view", "args_restorable", "args_lost"):
        assert p[key] == q[key], key
    assert (p["args_restorable"], p["args_lost"]) == (0.6, 0.0)
    assert priced.rows[0]["restores"] == 1


def test_what_a_restore_brought_back_is_in_view_from_then_on() -> None:
    """At step 8 the order id is needed again: the refund (recorded step 7) and the restore
    before it are the two latest steps with outputs, both shown, and the restore shows step
    1's output: in view, no second restore (unpriced, step 1 is still behind its stub)."""
    keep2 = "mask keep=2 reversible=true"
    priced = run([keep2], session(again=True)).strategies[keep2].summary()
    plain = run([keep2], session(again=True), priced=False).strategies[keep2].summary()
    assert priced["restores"] == 1
    # six needed: the user id (step 1), the order id (steps 2 and 8), the refund's three
    assert priced["args_needed"] == plain["args_needed"] == 6
    assert priced["args_restorable"] == 3 / 6 and plain["args_restorable"] == 4 / 6


def test_cli_prices_restores_unless_told_not_to(tmp_path: Path) -> None:
    source = tmp_path / "runs.jsonl"
    messages = [{"role": "system", "content": "You are a store agent."}]
    for m in (x for s in session().steps for x in s):
        messages.append(_openai(m))
    source.write_text(json.dumps(messages) + "\n")
    runner = CliRunner()
    out = {}
    for flag in ("--restore-pricing", "--no-restore-pricing"):
        path = tmp_path / f"{flag}.json"
        args = ["replay", str(source), "-s", "full", "-s", MASK, "--json", str(path), flag]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        out[flag] = json.loads(path.read_text())[MASK]
    assert out["--restore-pricing"]["restores"] == 1
    assert out["--no-restore-pricing"]["restores"] == 0
    assert out["--restore-pricing"]["restore_cost_usd"] > 0


def _openai(message: Message) -> dict[str, Any]:
    if isinstance(message, AssistantMessage):
        calls = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
        return {"role": "assistant", "content": message.content, "tool_calls": calls}
    if isinstance(message, ToolMessage):
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    return {"role": "user", "content": message.content}
