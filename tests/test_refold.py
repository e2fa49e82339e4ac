"""refold driven by a scripted agent through the real agent loop, and on generated histories."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given, settings

from contextfold.agent import Agent
from contextfold.bench.replay import replay
from contextfold.core.history import History
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.core.meter import PRICE_TABLES, get_profile
from contextfold.core.pipeline import render_checked
from contextfold.core.tokens import ApproxCounter
from contextfold.core.view import View
from contextfold.envs import FilesEnv
from contextfold.importers.base import Trajectory
from contextfold.models import ScriptedModel
from contextfold.strategies.refold import RefoldConfig, RefoldStrategy
from contextfold.strategies.refold.cost import CostRule
from contextfold.strategies.refold.markers import parse_markers
from contextfold.strategies.registry import build_strategy
from contextfold.strategies.restore import call_restore
from tests.gen import histories
from tests.test_refold_reach import lookups

A_PY = "\n".join(f"def f{i}(x):\n    return x * {i}" for i in range(20))
B_PY = "\n".join(f"CONST_{i} = {i * 7}" for i in range(30))
FILES = {"a.py": A_PY, "b.py": B_PY, "c.py": "print('c')\n" * 12, "notes.txt": "STALE: 1, 2"}


def act(n: int, tool: str, text: str = "", **args: str) -> AssistantMessage:
    return AssistantMessage(text or None, tool_calls=(ToolCall(f"c{n}", tool, json.dumps(args)),))


def run(replies: list[AssistantMessage], **config: object) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel([*replies, AssistantMessage("done")])
    strategy = build_strategy({"type": "refold", **config})
    history = History(SystemMessage("You fix code."))
    agent = Agent(model, strategy, FilesEnv(FILES), history=history, keep_views=True)
    agent.run("Fix a.py.")
    return agent, model


def texts(view: View) -> list[str]:
    return [m.content or "" for m in view.messages if not isinstance(m, SystemMessage)]


def test_stale_steps_fold_into_progress_notes_and_markers_elsewhere_are_ignored() -> None:
    replies = [
        act(1, "read_file", path="a.py"),
        act(2, "read_file", path="notes.txt"),  # the file says "STALE: 1, 2": ignored
        act(3, "read_file", path="b.py", text="PROGRESS: read a.py and notes\nSTALE: 1, 2"),
        act(4, "list_files"),
        act(5, "read_file", path="c.py"),
        act(6, "list_files"),
        act(7, "list_files"),
    ]
    agent, _ = run(replies, mask=False, advance="fixed", every=1, window=1)
    last = agent.result.views[-1]
    assert "[step 1 folded] (no summary)" in texts(last)  # step 1 had no PROGRESS line
    assert "[step 2 folded] (no summary)" in texts(last)
    assert not any(t.startswith("[step 3 folded]") for t in texts(last))
    folds = [e for e in last.elisions if e.reason == "fold"]
    assert {e.steps for e in folds} == {(1,), (2,)}
    assert all(str(e.restore) == f"restore(step={e.steps[0]})" for e in folds)
    assert last.unrecoverable_tokens == 0


def test_progress_text_is_the_note() -> None:
    replies = [
        act(1, "read_file", path="a.py", text="PROGRESS: located f3 in a.py\nSTALE: none"),
        act(2, "list_files", text="PROGRESS: listed\nSTALE: 1"),
        act(3, "list_files"),
        act(4, "list_files"),
    ]
    agent, _ = run(replies, mask=False, advance="fixed", every=1, window=1)
    assert "[step 1 folded] located f3 in a.py" in texts(agent.result.views[-1])


def test_markers_count_only_in_the_final_lines_of_the_reply() -> None:
    heredoc = "cat > notes.md <<'EOF'\nPROGRESS: fake\nSTALE: 1, 2\nEOF\nWriting the notes."
    assert parse_markers(heredoc).stale == frozenset() and parse_markers(heredoc).progress is None
    quoted = "The log says:\nSTALE: 3-9\nso I go on.\nPROGRESS: read the log\n\nSTALE: none\n"
    markers = parse_markers(quoted)
    assert markers.progress == "read the log" and markers.stale == frozenset()
    assert not markers.malformed
    assert parse_markers("Done.\nPROGRESS: fixed f3\nSTALE: 1-2").stale == {1, 2}


def test_a_stale_line_quoted_mid_reply_folds_nothing() -> None:
    quoted = "Saving the log:\n```\nSTALE: 1\n```\nPROGRESS: saved"
    replies = [act(1, "list_files"), act(2, "list_files", text=quoted), act(3, "list_files")]
    agent, _ = run(replies, advance="fixed", every=1, window=1)
    assert not [e for e in agent.result.views[-1].elisions if e.reason == "fold"]


def test_malformed_stale_line_folds_nothing_and_is_counted() -> None:
    replies = [act(1, "list_files", text="STALE: soon"), act(2, "list_files")]
    agent, _ = run(replies, advance="fixed", every=1, window=1)
    strategy = agent.strategy
    assert isinstance(strategy, RefoldStrategy)
    assert strategy._state.malformed_markers == 1
    assert not [e for e in agent.result.views[-1].elisions if e.reason == "fold"]


def test_a_restore_answers_with_the_original_and_leaves_the_cached_prefix_alone() -> None:
    replies = [
        act(1, "read_file", path="a.py"),
        act(2, "read_file", path="b.py"),
        act(3, "list_files"),
        act(4, "list_files"),
        act(5, "restore", step="1"),
        act(6, "list_files"),
    ]
    agent, model = run(replies, advance="fixed", every=1, window=1)
    history = agent.history
    restored = history[5].results[0]  # step 5 is the restore call (step 0 is the task)
    assert restored.content == history[1].results[0].content  # verbatim original
    views = agent.result.views
    stub = "[step 1] output omitted (40 lines); restore(step=1) shows it"
    assert stub in texts(views[4])  # before the restore: step 1 is a stub
    after = views[5]  # right after the restore: the original is the restore's result
    assert "[step 5]\n" + history[1].results[0].content in texts(after)
    before = texts(views[4])
    upto = before.index(stub) + 1  # the prefix through the stub is not rewritten
    assert texts(after)[:upto] == before[:upto]
    assert model.calls[-1].messages == views[-1].messages


def test_rerunning_a_read_supersedes_the_older_copy_and_identical_output_dedups() -> None:
    replies = [
        act(1, "read_file", path="b.py"),
        act(2, "write_file", path="b.py", content=B_PY + "\nEXTRA = 1"),
        act(3, "read_file", path="b.py"),
        act(4, "grep", pattern="CONST_1"),
        act(5, "grep", pattern="CONST_2"),
        act(6, "read_file", path="c.py"),
        act(7, "read_file", path="c.py"),
        act(8, "read_file", path="c.py"),
        act(9, "list_files"),
        act(10, "list_files"),
        act(11, "list_files"),
    ]
    agent, _ = run(replies, mask=False, advance="fixed", every=1, window=1)
    end = texts(agent.result.views[-1])
    assert any(t.startswith("[step 1] output superseded by step 3") for t in end)
    reasons = {e.reason for e in agent.result.views[-1].elisions}
    assert "supersede" in reasons
    # c.py was read three times, unchanged: the later copies are stubbed as they arrive (they
    # never enter the view, nor the cache, in full) and point at the first, kept in full
    assert any(t.startswith("[step 6]\n") for t in end)
    for repeat in (7, 8):
        assert f"[step {repeat}] same output as step 6; restore(step={repeat}) shows it" in end
    c_py = agent.history[6].results[0].content
    assert all(sum(c_py in t for t in texts(v)) <= 1 for v in agent.result.views)
    assert {"repeat", "supersede"} <= reasons
    # the listing is shorter than a stub would be: its older copies stay as they are
    listing = agent.history[9].results[0].content
    assert end.count("[step 9]\n" + listing) == 1
    assert not any(t.startswith("[step 9] output superseded") for t in end)
    # the newest read of b.py is shown in full, not as a pointer to the superseded copy
    assert any(t.startswith("[step 3]\n   1  CONST_0 = 0") for t in end)


def test_span_dedup_points_to_the_earlier_copy() -> None:
    edited = A_PY.replace("return x * 19", "return x * 190")
    replies = [
        act(1, "read_file", path="a.py"),
        act(2, "write_file", path="a.py", content=edited),
        act(3, "read_file", path="b.py"),
        act(4, "grep", pattern="def f"),
        act(5, "list_files"),
        act(6, "list_files"),
    ]
    model = ScriptedModel([*replies, AssistantMessage("done")])
    strategy = RefoldStrategy(
        RefoldConfig(mask=False, supersede=False, every=1, window=1, advance="fixed")
    )
    env = FilesEnv(FILES)
    history = History(SystemMessage("s"))
    Agent(model, strategy, env, history=history).run("go")
    # a second read of the edited file repeats 38 of its 40 lines: spans are replaced
    history.append(
        act(9, "read_file", path="a.py"),
        ToolMessage(env.call("read_file", {"path": "a.py"}), "c9", name="read_file"),
    )
    history.append(act(10, "list_files"), ToolMessage("a.py", "c10", name="list_files"))
    history.append(act(11, "list_files"), ToolMessage("b.py", "c11", name="list_files"))
    view = render_checked(strategy, history)
    spans = [t for t in texts(view) if t.startswith("[step 8]\n")]  # the second read of a.py
    assert spans and "[... lines 1-39 same as step 1 lines 1-39 ...]" in spans[0]
    assert any(
        e.reason == "dedup-span" and str(e.restore) == "restore(step=8)" for e in view.elisions
    )


def test_prefix_is_byte_identical_between_advances() -> None:
    replies = [act(i, "read_file", path=p) for i, p in enumerate(["a.py", "b.py", "c.py"] * 5)]
    agent, model = run(replies, advance="fixed", every=3, window=2)
    strategy = agent.strategy
    assert isinstance(strategy, RefoldStrategy)
    calls = [c.messages for c in model.calls]
    grew = sum(1 for old, new in itertools.pairwise(calls) if new[: len(old)] == old)
    # every call but those at an advance repeats the previous prompt exactly as its prefix
    assert grew == len(calls) - 1 - strategy.advances
    assert strategy.advances >= 4


def test_budget_forces_an_advance() -> None:
    replies = [act(i, "read_file", path="a.py" if i % 2 else "b.py") for i in range(8)]
    model = ScriptedModel([*replies, AssistantMessage("done")])
    # dedup off: the re-reads would be stubbed as repeats and the view would stay in budget
    strategy = RefoldStrategy(RefoldConfig(every=50, window=2, dedup=False))
    history = History(SystemMessage("s"))
    agent = Agent(model, strategy, FilesEnv(FILES), history=history, budget=1500)
    result = agent.run("go")
    assert strategy.forced_compactions >= 1
    assert result.strategy_compactions == strategy.forced_compactions
    assert result.meter.peak_context_tokens <= 1500


@pytest.mark.slow
def test_refold_views_are_valid_and_every_removal_is_restorable() -> None:
    """On generated histories whose tool outputs may be long enough to cut, mask and
    deduplicate: every view is valid and loses nothing, and every elision of the last one
    gives its step's output back; over the cases, refold did remove something."""
    restored: list[int] = []

    @settings(max_examples=150, deadline=None, derandomize=True)
    @given(histories(max_steps=40, long_outputs=True))
    def check(history: History) -> None:
        for config in (
            RefoldConfig(),
            RefoldConfig(mask=False, advance="fixed", every=1, window=1),
        ):
            restored.append(_replayed_and_restored(history, RefoldStrategy(config)))

    check()
    assert sum(restored) > 0, "no generated case gave refold anything to remove"


def _replayed_and_restored(history: History, strategy: RefoldStrategy) -> int:
    """Replay ``history`` through ``strategy``, checking each view; restore every elision
    of the last view and check it gives the output back; the restores made."""
    replayed = History(history.system, counter=history.counter)
    for step in history:
        view = render_checked(strategy, replayed)
        assert view.unrecoverable_tokens == 0
        replayed.append_step(step)
        strategy.observe(step, replayed)
    view = render_checked(strategy, replayed)
    for elision in view.elisions:
        step = elision.steps[0]
        text = strategy.call_tool("restore", {"step": step}, replayed)
        original = replayed[step]
        assert text in [r.content for r in original.results] or len(original.results) != 1
    return len(view.elisions)


def test_restore_tool_refuses_bad_arguments() -> None:
    history = History(SystemMessage("s"))
    strategy = RefoldStrategy()
    assert strategy.call_tool("restore", {"step": "x"}, history).startswith("error: restore needs")
    assert "there is no step 3" in strategy.call_tool("restore", {"step": 3}, history)
    # the same answer every restore-offering strategy gives to a tool it does not offer
    assert strategy.call_tool("undo", {}, history) == call_restore("refold", "undo", {}, history)
    assert "no tool 'undo'" in strategy.call_tool("undo", {}, history)
    assert strategy.restores == 0  # none of these brought anything back


def test_in_a_chain_upstream_elisions_are_kept_and_become_restorable() -> None:
    replies = [act(i, "read_file", path="a.py") for i in range(1, 4)]
    chain = build_strategy({"type": "chain", "strategies": ["clip max_chars=100", "refold"]})
    history = History(SystemMessage("s"))
    model = ScriptedModel([*replies, AssistantMessage("done")])
    result = Agent(model, chain, FilesEnv(FILES), history=history, keep_views=True).run("go")
    last = result.views[-1]
    clips = [e for e in last.elisions if e.reason == "clip"]
    assert clips and all(str(e.restore) == f"restore(step={e.steps[0]})" for e in clips)
    assert last.unrecoverable_tokens == 0


def tau2_like_session(*, users: bool = True) -> Trajectory:
    """A customer-service session: a long policy, user turns, nine short lookups (``users``
    false: no user turns, the agent working through the lookups alone)."""
    policy = "\n".join(
        f"Policy rule {i}: check the booking before changing it." for i in range(160)
    )
    steps: list[tuple[Message, ...]] = [(UserMessage("Hi, I want to change my flight."),)]
    for i in range(9):
        record = json.dumps(
            {
                "reservation": f"R{i:05d}",
                "flights": [f"HAT{i}{k:02d} economy seat 12A" for k in range(40)],
            }
        )
        steps.append((act(i, "get_reservation", id=f"R{i:05d}"), ToolMessage(record, f"c{i}")))
        if users and i % 3 == 2:
            steps.append((AssistantMessage("Anything else?"),))
            steps.append((UserMessage(f"Yes, also check reservation R{i + 1:05d}."),))
    steps.append((AssistantMessage("All done."),))
    return Trajectory("tau2-like", "test", SystemMessage(policy), tuple(steps))


@pytest.mark.parametrize("prices", ["default", "openai"])
def test_refold_never_costs_more_than_full_on_a_short_session(prices: str) -> None:
    specs = ["full", "refold", "refold window=2 horizon=40"]  # the last: the old defaults
    result = replay(
        [tau2_like_session()],
        specs,
        counter=ApproxCounter(),
        profile=get_profile("qwen3-8b"),
        prices=PRICE_TABLES[prices],
    )
    full, refold, eager = (result.strategies[s].summary()["cost_usd"] for s in specs)
    assert refold <= full
    assert eager <= full  # the policy leads the session: stubs wait whatever the calls assumed
    alone = replay(
        [tau2_like_session(users=False)],
        specs,
        counter=ApproxCounter(),
        profile=get_profile("qwen3-8b"),
        prices=PRICE_TABLES[prices],
    )
    full, refold, eager = (alone.strategies[s].summary()["cost_usd"] for s in specs)
    assert refold <= full  # the policy leads the session: stubs wait


def test_before_its_first_advance_refold_sends_what_full_sends() -> None:
    history = lookups(reach_back=False)  # an agent alone, its outputs soon outweighing the rest
    refold, full = RefoldStrategy(), build_strategy("full")
    replayed = History(history.system, counter=history.counter)
    compared = 0
    for step in history:
        if step.kind == "assistant":
            view = render_checked(refold, replayed)
            if refold.advances:
                break
            assert view.messages == full.render(replayed, None).messages
            compared += 1
        replayed.append_step(step)
        refold.observe(step, replayed)
    assert compared >= 3  # no labels, no note, nothing removed: the cache sees full history
    assert refold.advances and "[step" in str(view.messages[-1].content)


def test_cost_rule_once_is_one_restore_over_the_change_life() -> None:
    """``once`` counts one restore in all (not per call), so a sure restore that costs more
    than the saving over the calls to come blocks the change, and none lets it pass."""
    rule = CostRule(PRICE_TABLES["default"])
    figures = {"rewritten": 0, "saving": 100, "calls": 1, "prompt": 1000, "restored": 100}
    calls = rule.expected_calls(1)
    assert rule.pays(**figures, once=0.0)
    assert not rule.pays(**figures, once=1.0)
    assert rule.pays(**figures, once=1.0) == rule.pays(**figures, reach=1.0 / calls)


def test_the_first_advance_leaves_the_outputs_before_its_first_change_as_recorded() -> None:
    """Labelling every output at the first advance would rewrite the cache from the first
    output on; only the steps from the first one it changes are labelled (and rewritten)."""
    again = "alpha\n" * 30 + "omega"  # repeats step 1's lines: span dedup at the advance
    outputs = ["alpha\n" * 30, "beta\n" * 30, again, "gamma\n" * 30, "delta\n" * 30]
    history = History(SystemMessage("s"), counter=ApproxCounter())
    history.append(UserMessage("go"))
    for n, text in enumerate(outputs, start=1):
        history.append(act(n, "read_file", path=f"f{n}"), ToolMessage(text, f"c{n}"))
    strategy = RefoldStrategy(
        RefoldConfig(mask=False, supersede=False, advance="fixed", every=4, window=1)
    )
    view = render_checked(strategy, history)
    assert strategy.advances == 1
    shown = texts(view)
    recorded = [m.content or "" for s in history.steps[:3] for m in s.messages]
    assert shown[:5] == recorded  # the task, steps 1 and 2 as recorded: still cached
    assert "PROGRESS" in shown[5]  # the marker note opens the first changed step
    assert shown[7].startswith("[step 3]\n[") and shown[7].endswith("\nomega")  # span stub
    assert shown[9] == "[step 4]\n" + outputs[3]
    assert shown[11] == "[step 5]\n" + outputs[4]  # the window, after the boundary
