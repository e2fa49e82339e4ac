"""Learning across sessions (core/experience.py, the Learning protocol, --learn): what ended
sessions showed becomes the next sessions' priors for the calls to come, the reach-back rate
and the commit chance; the loop and replay say when a session ends; learning needs the sessions
in order."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from typer.testing import CliRunner

from contextfold.agent.loop import Agent
from contextfold.bench.cluster import RaySweep
from contextfold.bench.replay import ReplayResult, replay
from contextfold.bench.sufficiency.runner import Setting, run_matrix
from contextfold.cli import app
from contextfold.core.errors import ConfigError, ContextFoldError
from contextfold.core.experience import PRIOR_EXPOSURES, Experience
from contextfold.core.experience_file import load_experiences, save_experiences
from contextfold.core.history import History
from contextfold.core.messages import SystemMessage
from contextfold.core.meter import PRICE_TABLES, get_profile
from contextfold.core.protocols import Learning
from contextfold.core.tokens import ApproxCounter
from contextfold.envs.workspace import WorkspaceEnv
from contextfold.importers.base import Trajectory
from contextfold.models import ScriptedModel
from contextfold.serve.build import make_strategy_factory
from contextfold.serve.config import ServeConfig
from contextfold.strategies.carryon import CarryOnConfig, CarryOnStrategy
from contextfold.strategies.folding import Folder
from contextfold.strategies.refold import RefoldConfig, RefoldStrategy
from contextfold.strategies.refold.cost import CostRule
from tests.test_carryon import FIRST
from tests.test_carryon_digest import long_session
from tests.test_refold_reach import lookups, views
from tests.test_replay import coding_session, write_jsonl

runner = CliRunner()


def test_calls_to_come_are_those_of_the_sessions_as_long_as_this_one() -> None:
    seen = Experience()
    assert seen.calls_to_come(10) == 1.0  # nothing ended yet: this call alone, no blind bet
    for calls in (4, 10, 12):
        seen.record(calls=calls)
    # sessions of 10 and 12 calls had 1 and 3 calls from the 10th on; one more ends now
    assert seen.calls_to_come(10) == pytest.approx((1 + 3 + 1) / 3)
    assert seen.calls_to_come(13) == 1.0  # longer than any seen
    rule = CostRule(PRICE_TABLES["default"], experience=seen)
    assert rule.expected_calls(10) == 2  # (1 + 3 + 1) / 3, rounded
    assert rule.expected_calls(13) == 1  # longer than any seen
    assert CostRule(PRICE_TABLES["default"]).expected_calls(10) == 23
    assert CostRule(PRICE_TABLES["default"], experience=Experience()).expected_calls(10) == 1


def test_the_rates_of_ended_sessions_are_priors_worth_a_few_calls() -> None:
    seen = Experience()
    assert seen.reach_prior() is None and seen.commit_prior() == (1.0, 2.0)
    seen.record(calls=30, hits=9, exposed=29, asked=10, committed=0)
    prior = seen.reach_prior()
    assert prior is not None
    hits, exposed = prior
    assert exposed == PRIOR_EXPOSURES and hits / exposed == pytest.approx(9.5 / 30)
    commits, asked = seen.commit_prior()
    assert asked == 4 and commits / asked == pytest.approx(1 / 12)


def test_refold_that_learned_its_sessions_end_here_takes_no_late_advance() -> None:
    def session() -> History:
        return lookups(reach_back=False, calls=8)  # a chain: each call uses the latest output

    alone, _ = views(session())
    assert alone.advances == 2  # at calls 8 and 9, expecting 18 and 21 calls to come
    for length, advances in ((alone._boundary.calls, 0), (200, 2)):
        refold = RefoldStrategy()
        refold.share(ended(length))
        assert views(session(), refold)[0].advances == advances
    unlearning = RefoldStrategy(RefoldConfig(learn=False))
    unlearning.share(ended(alone._boundary.calls))
    assert views(session(), unlearning)[0].advances == alone.advances


def ended(length: int, sessions: int = 20) -> Experience:
    """An experience of ``sessions`` ended sessions of ``length`` calls each."""
    seen = Experience()
    for _ in range(sessions):
        seen.record(calls=length)
    return seen


def runs_of(history: History, n: int) -> list[Trajectory]:
    """``n`` recorded runs of the same session."""
    steps = tuple(tuple(step.messages) for step in history)
    return [Trajectory(f"t{i}", "mem", history.system, steps) for i in range(n)]


def replayed(
    runs: list[Trajectory],
    specs: list[str],
    *,
    learn: bool = False,
    experience: dict[str, Experience] | None = None,
    sweep: RaySweep | None = None,
) -> ReplayResult:
    counter, profile, prices = ApproxCounter(), get_profile("qwen3-8b"), PRICE_TABLES["default"]
    return replay(
        runs,
        specs,
        counter=counter,
        profile=profile,
        prices=prices,
        learn=learn,
        experience=experience,
        sweep=sweep,
    )


def test_replay_with_learn_shares_one_experience_per_strategy_in_order() -> None:
    runs = runs_of(lookups(reach_back=False, calls=20), 3)
    alone = replayed(runs, ["full", "refold"])
    learned = replayed(runs, ["full", "refold"], learn=True)
    first, *later = learned.strategies["refold"].rows
    full = alone.strategies["full"].rows[0]
    # nothing ended yet: no bet on calls to come (the Copernican one, alone, takes some)
    assert first["cost_usd"] == full["cost_usd"] > alone.strategies["refold"].rows[0]["cost_usd"]
    assert later[0]["cost_usd"] < first["cost_usd"]  # it learned this session runs to 21
    assert later[0]["cost_usd"] <= alone.strategies["refold"].rows[1]["cost_usd"]
    assert learned.strategies["full"].rows == alone.strategies["full"].rows
    with pytest.raises(ContextFoldError, match="in order"):
        replayed(runs, ["refold"], learn=True, sweep=RaySweep(None, 1))


def test_the_loop_tells_a_learning_strategy_its_session_ended() -> None:
    seen = Experience()
    refold = RefoldStrategy()
    refold.share(seen)
    assert isinstance(refold, Learning)
    model = ScriptedModel(["Nothing to do.", "Still nothing."])
    history = History(SystemMessage("You help."), counter=ApproxCounter())
    Agent(model, refold, WorkspaceEnv(), history=history).run("Say hello.")
    assert seen.lengths == [1]
    refold.end(history)  # a second end of the same session adds nothing
    assert seen.lengths == [1]


def test_carryon_asks_less_once_ended_sessions_showed_its_folds_refused() -> None:
    history = long_session(20, lines=60)  # a first fold pays if it commits (test_carryon_gate)
    config = CarryOnConfig(threshold=100)
    fresh = CarryOnStrategy(config, folder=Folder(ScriptedModel(list(FIRST))))
    assert fresh.fold(history, None)[0].calls
    seen = Experience()
    seen.record(calls=40, asked=12, committed=0)
    taught = CarryOnStrategy(config, folder=Folder(ScriptedModel(list(FIRST))))
    taught.share(seen)
    (record,) = taught.fold(long_session(20, lines=60), None)
    assert record.output["stage"] == "gate" and not record.calls
    assert record.output["commit_chance_pct"] == 7  # (0 + 4 / 14) / (0 + 4)


def test_learning_across_tasks_runs_them_in_one_process() -> None:
    with pytest.raises(ContextFoldError, match="in order in one process"):
        run_matrix("airline", ["0"], [Setting("refold")], workers=2, learn=True)


def test_the_commands_refuse_learn_with_ray_before_any_work(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    write_jsonl(path, [coding_session(12), coding_session(20)])
    res = runner.invoke(app, ["replay", str(path), "-s", "refold", "--learn", "--ray", "local"])
    assert res.exit_code == 2 and "--learn" in res.output and "--ray" in res.output
    res = runner.invoke(app, ["replay", str(path), "-s", "full", "-s", "refold", "--learn"])
    assert res.exit_code == 0 and "learned from those before it" in res.output
    argv = ["bench", "sufficiency", "--domain", "airline", "-s", "refold", "--learn"]
    res = runner.invoke(app, [*argv, "--ray", "local"])
    assert res.exit_code == 2 and "in one process" in res.output


def test_an_experience_file_round_trips_frozen_and_bad_files_are_clear_errors(
    tmp_path: Path,
) -> None:
    seen = ended(9, sessions=3)
    seen.record(calls=4, hits=1, exposed=2, asked=1)
    path = tmp_path / "exp.json"
    save_experiences(path, {"refold": seen})
    (label, loaded), *_ = load_experiences(path).items()
    assert label == "refold" and loaded.frozen and loaded.counts() == seen.counts()
    loaded.record(calls=50)
    assert loaded.lengths == [9, 9, 9, 4]  # frozen: records nothing
    assert pickle.loads(pickle.dumps(loaded)) == loaded  # what a worker process gets
    for text, problem in (
        ("{", "is not JSON"),
        ("[]", "expected an object"),
        ('{"refold": {"lengths": [3], "hits": -1}}', "'refold'"),
    ):
        path.write_text(text)
        with pytest.raises(ConfigError, match=problem):
            load_experiences(path)
    with pytest.raises(ConfigError, match="cannot read"):
        load_experiences(tmp_path / "missing.json")


def test_what_was_learned_on_some_runs_carries_frozen_to_others_in_any_order() -> None:
    runs = runs_of(lookups(reach_back=False, calls=8), 2)
    taught = dict(replayed(runs * 10, ["refold"], learn=True).experiences)
    assert taught["refold"].lengths == [9] * 20
    alone = replayed(runs, ["refold"]).strategies["refold"].rows
    carried = replayed(runs, ["refold"], experience=taught)
    first, second = ({k: v for k, v in r.items() if k != "id"} for r in carried_rows(carried))
    assert first == second  # a frozen experience: the same for every session, in any order
    # it learned that this agent never reaches back (120 exposed calls, no reach-back): it
    # masks sooner and pays less than a session that starts from its own use of outputs
    assert first["removed_tokens"] > alone[0]["removed_tokens"]
    assert first["cost_usd"] < alone[0]["cost_usd"]
    assert carried.experiences["refold"].frozen and taught["refold"].lengths == [9] * 20


def carried_rows(result: ReplayResult) -> list[dict[str, object]]:
    return result.strategies["refold"].rows


@pytest.mark.tau2
@pytest.mark.slow
def test_sufficiency_workers_share_a_frozen_experience() -> None:
    settings = [Setting("refold")]
    seen = {"refold": ended(4)}
    one = run_matrix("airline", ["0", "1"], settings, experience=seen)
    two = run_matrix("airline", ["0", "1"], settings, workers=2, experience=seen)
    assert [r.cost_usd for r in one] == [r.cost_usd for r in two]
    assert seen["refold"].lengths == [4] * 20  # frozen copies: nothing recorded


def test_save_experience_needs_learn_and_an_experience_file_is_read_first(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "runs.jsonl", [coding_session(12), coding_session(20)])
    out = tmp_path / "exp.json"
    res = runner.invoke(app, ["replay", str(path), "-s", "refold", "--save-experience", str(out)])
    assert res.exit_code == 2 and "needs --learn" in res.output
    argv = ["replay", str(path), "-s", "refold", "--learn", "--save-experience", str(out)]
    assert runner.invoke(app, argv).exit_code == 0
    assert load_experiences(out)["refold"].lengths
    bad = tmp_path / "bad.json"
    bad.write_text("[1]")
    res = runner.invoke(app, ["replay", str(path), "-s", "refold", "--experience", str(bad)])
    assert res.exit_code == 2 and "expected an object" in res.output


def test_the_proxy_starts_every_session_from_a_frozen_experience_file(tmp_path: Path) -> None:
    path = tmp_path / "exp.json"
    save_experiences(path, {"refold": ended(30)})
    make = make_strategy_factory(ServeConfig(upstream="local", experience=path))
    first, second = make(), make()
    assert isinstance(first, RefoldStrategy) and isinstance(second, RefoldStrategy)
    assert first.rule.expected_calls(10) == 20  # (20 sessions x 21 calls + 1) / 21
    assert RefoldStrategy().rule.expected_calls(10) == 23
    assert first.rule.experience is second.rule.experience
    assert first.rule.experience is not None and first.rule.experience.frozen
    with pytest.raises(ConfigError, match="no entry for strategy 'ufold'"):
        make_strategy_factory(ServeConfig(upstream="local", strategy="ufold", experience=path))
    argv = ["serve", "--upstream", "local", "--no-auth", "-s", "window", "--experience", str(path)]
    res = runner.invoke(app, argv)
    assert res.exit_code == 2 and "no entry for strategy 'window'" in res.output
