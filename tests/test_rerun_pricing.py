"""Re-run pricing in replay, on sessions written here whose lost values are known by
construction: the values a view lost are got again, each time with a model call of its own."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from contextfold.bench.availability import ArgIndex, ArgTally
from contextfold.bench.replay import replay_one
from contextfold.bench.reruns import ASK_AGAIN
from contextfold.bench.restores import RestorePricing
from contextfold.cli import app
from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage, Message, SystemMessage, UserMessage
from contextfold.core.meter import PRICE_TABLES, Meter
from contextfold.core.tokens import ApproxCounter
from contextfold.importers.base import Trajectory
from contextfold.strategies.registry import build_strategy
from tests.test_availability import FILLER, step
from tests.test_restore_pricing import MASK, ORDER, ORDERS, _openai, run, session

LOSES = "mask keep=1"
"""Masks every output but the latest step's, with no way back: the refund's values are lost."""


def replayed(spec: str, traj: Trajectory) -> tuple[History, Meter, RestorePricing]:
    counter = ApproxCounter()
    steps = traj.counted_steps(counter)
    pricing = RestorePricing(ArgTally(ArgIndex.build(traj.system, steps)))
    meter = Meter(prices=PRICE_TABLES["default"])
    history = replay_one(
        traj, steps, build_strategy(spec), meter, counter=counter, restores=pricing
    )
    return history, meter, pricing


def test_a_lost_value_costs_one_call_that_runs_its_tools_again() -> None:
    """The refund (step 7) needs the order id (step 1's output) and the item id and price
    (step 2's), all masked for good: one call runs both lookups again, with their recorded
    arguments, and their recorded outputs come back whole."""
    traj = session()
    history, meter, pricing = replayed(LOSES, traj)
    assert (pricing.reruns, pricing.calls) == (1, 0)
    assert len(history) == len(traj.steps) + 1
    rerun = history[7]
    assert isinstance(rerun.message, AssistantMessage) and rerun.message.content is None
    calls = [(c.name, json.loads(c.arguments)) for c in rerun.message.tool_calls]
    assert calls == [
        ("get_user", {"user_id": "mia_li_3668"}),
        ("get_order", {"order_id": "#W7654321"}),
    ]
    assert [r.content for r in rerun.results] == [ORDERS, ORDER]
    assert history[8].messages == traj.steps[7]  # the refund, one place later
    # the re-run call sends the view as rendered; its completion is the calls it makes
    paid = meter.calls[-2]
    assert paid.completion_tokens == rerun.tokens[0]
    assert pricing.rerun_cost_usd == paid.cost_usd > 0
    assert len(meter.calls) == sum(s[0].role == "assistant" for s in traj.steps) + 1


def test_replay_reports_reruns_and_their_cost_and_prices_none_when_told_not_to() -> None:
    strategies = ["full", LOSES]
    priced = run(strategies, session()).strategies
    plain = replay_unpriced(strategies)
    p, q = priced[LOSES].summary(), plain[LOSES].summary()
    assert (p["reruns"], q["reruns"], q["rerun_cost_usd"]) == (1, 0, 0.0)
    assert p["rerun_cost_usd"] > 0 and priced[LOSES].rows[0]["reruns"] == 1
    assert p["prompt_tokens"] > q["prompt_tokens"] and p["cost_usd"] > q["cost_usd"]
    assert p["args_lost"] == q["args_lost"] == 3 / 5  # measured before the re-run
    assert priced["full"].summary()["reruns"] == 0  # full loses nothing


def replay_unpriced(strategies: list[str]) -> dict[str, object]:
    from contextfold.bench.replay import replay
    from contextfold.core.meter import get_profile

    return replay(  # type: ignore[return-value]
        [session()],
        strategies,
        counter=ApproxCounter(),
        profile=get_profile("qwen3-8b"),
        prices=PRICE_TABLES["default"],
        price_reruns=False,
    ).strategies


def test_a_restorable_value_is_restored_not_re_run() -> None:
    _, _, pricing = replayed(MASK, session())
    assert (pricing.calls, pricing.reruns) == (1, 0)


def asked_once() -> Trajectory:
    """The user gives their id in a middle message (step 2); after six lookups and a nudge,
    the lookup at step 10 uses it. ``window keep=1`` keeps the task, the nudge and the latest
    step: the id is lost, and only the user gave it."""
    steps: list[tuple[Message, ...]] = [
        (UserMessage("Please refund my lamp."),),
        (AssistantMessage("Sure: what is your user id?"),),
        (UserMessage("It is mia_li_3668."),),
    ]
    steps += [step(3 + i, "browse", FILLER, page=f"page-{i}") for i in range(6)]
    steps.append((UserMessage("Go ahead, please."),))
    steps.append(step(10, "get_user", ORDERS, user_id="mia_li_3668"))
    return Trajectory("u", "test", SystemMessage("You are a store agent."), tuple(steps))


def test_a_value_only_the_user_gave_is_asked_for_again() -> None:
    """The agent asks (the re-run call's completion), and the user's recorded words come back
    as the next user message; the recorded lookup follows with the id in view."""
    traj = asked_once()
    history, meter, pricing = replayed("window keep=1", traj)
    assert pricing.reruns == 1
    ask, again = history[10], history[11]
    assert ask.message == AssistantMessage(ASK_AGAIN)
    assert again.message == UserMessage("It is mia_li_3668.")
    assert history[12].messages == traj.steps[10]
    assert meter.calls[-2].completion_tokens == ask.tokens[0]
    assert pricing.tally.lost == 1


def test_what_a_rerun_brought_back_is_in_view_from_then_on() -> None:
    """At step 8 the order id is needed again: the re-run before the refund shows step 1's
    output, and ``mask keep=2`` still shows it (the two latest steps with outputs): no
    second re-run; unpriced, step 1 stays masked and the id is lost at step 8 too."""
    keep2 = "mask keep=2"
    priced = run([keep2], session(again=True)).strategies[keep2].summary()
    assert priced["reruns"] == 1
    assert priced["args_lost"] == 3 / 6  # the refund's three; step 8's id is in view


def test_cli_prices_reruns_unless_told_not_to(tmp_path: Path) -> None:
    source = tmp_path / "runs.jsonl"
    messages = [{"role": "system", "content": "You are a store agent."}]
    messages += [_openai(m) for s in session().steps for m in s]
    source.write_text(json.dumps(messages) + "\n")
    out = {}
    for flag in ("--rerun-pricing", "--no-rerun-pricing"):
        path = tmp_path / f"{flag}.json"
        args = ["replay", str(source), "-s", "full", "-s", LOSES, "--json", str(path), flag]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        out[flag] = json.loads(path.read_text())[LOSES]
    assert out["--rerun-pricing"]["reruns"] == 1 and out["--rerun-pricing"]["rerun_cost_usd"] > 0
    assert (out["--no-rerun-pricing"]["reruns"], out["--no-rerun-pricing"]["rerun_cost_usd"]) == (
        0,
        0.0,
    )
