"""refold's restore risk from the session (reach-backs) and its estimate of the calls to come."""

from __future__ import annotations

import json
from typing import Any

import pytest

from contextfold.core.history import History
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.core.meter import PRICE_TABLES
from contextfold.core.pipeline import render_checked
from contextfold.core.tokens import ApproxCounter
from contextfold.core.view import View
from contextfold.strategies.refold import RefoldConfig, RefoldStrategy
from contextfold.strategies.refold.cost import NEVER, CostRule
from contextfold.strategies.refold.reach import USE_WEIGHT, Reach


def call(n: int, tool: str, **args: str | int) -> AssistantMessage:
    return AssistantMessage(None, tool_calls=(ToolCall(f"c{n}", tool, json.dumps(args)),))


def build(steps: list[tuple[Message, ...]], system: str = "You help customers.") -> History:
    history = History(SystemMessage(system), counter=ApproxCounter())
    for messages in steps:
        history.append(*messages)
    return history


def test_a_call_reaches_back_when_only_an_output_older_than_the_window_holds_its_value() -> None:
    orders = json.dumps({"orders": ["#W9001", "#W9002"]})
    history = build(
        [
            (UserMessage("Hi, I am alice_42."),),
            (call(1, "get_user", user_id="alice_42"), ToolMessage(orders, "c1")),
            # from the latest output (the window): no reach-back, nothing older yet
            (call(2, "get_order", order_id="#W9001"), ToolMessage('{"item": "lamp"}', "c2")),
            # only step 1's output holds it, and it is older than the window: a reach-back
            (call(3, "get_order", order_id="#W9002"), ToolMessage('{"item": "desk"}', "c3")),
            # the agent's own step 3 holds it now: no reach-back
            (call(4, "cancel_order", order_id="#W9002"), ToolMessage("ok", "c4")),
            # a restore reaches back by definition
            (call(5, "restore", step=1), ToolMessage(orders, "c5")),
        ]
    )
    reach = Reach("You help customers.", window=1)
    for step in history:
        reach.learn(step)
    assert (reach.hits, reach.exposed) == (2, 3)  # steps 3, 4, 5 had older outputs
    assert reach.drawn == {1, 5}  # the restore's own result is kept in full too
    # steps 2 and 3 used a value only an output held; step 4's was its own; the restore aside
    assert (reach.uses, reach.calls) == (2, 3)
    use = (2 + 0.5) / (3 + 1)
    assert reach.rate == (2 + USE_WEIGHT * use) / (3 + USE_WEIGHT)


def test_the_prior_is_the_agents_use_of_outputs_at_any_distance() -> None:
    """Before it is exposed, an agent whose every call takes an id from the latest output
    (a chain of lookups) is expected to reach back far more than one that uses nothing the
    outputs say; after many exposed calls without a reach-back both rates are low."""
    chain, reads = Reach("", window=1), Reach("", window=1)
    for step in lookups(reach_back=False, calls=4):
        chain.learn(step)
    for step in build(
        [
            (call(i, "run", cmd=f"pytest -k t{i}"), ToolMessage("1 passed", f"c{i}"))
            for i in range(4)
        ]
    ):
        reads.learn(step)
    assert (chain.uses, chain.calls, reads.uses, reads.calls) == (3, 3, 0, 3)
    assert chain.rate > 3 * reads.rate
    long_chain = Reach("", window=1)
    for step in lookups(reach_back=False, calls=40):
        long_chain.learn(step)
    assert long_chain.hits == 0 and long_chain.exposed >= 30 and long_chain.rate < 0.1


def test_values_in_the_system_prompt_or_a_user_message_never_reach_back() -> None:
    history = build(
        [
            (UserMessage("Order #W7777 please."),),
            (call(1, "get_order", order_id="#W7777"), ToolMessage("#W7777 #W5555", "c1")),
            (call(2, "get_order", order_id="#W5555"), ToolMessage("#W5555", "c2")),
            (call(3, "get_order", order_id="#W7777"), ToolMessage("#W7777", "c3")),
            (call(4, "get_order", order_id="#W3333"), ToolMessage("none", "c4")),
        ],
        system="Orders look like #W3333.",
    )
    reach = Reach("Orders look like #W3333.", window=1)
    for step in history:
        reach.learn(step)
    assert reach.hits == 0 and reach.exposed == 2  # steps 3 and 4 had older outputs


def test_calls_to_come_are_the_truncated_copernican_mean() -> None:
    rule = CostRule(PRICE_TABLES["default"])
    assert [rule.expected_calls(t) for t in (0, 1, 3, 10)] == [1, 2, 7, 23]
    assert CostRule(PRICE_TABLES["default"], horizon=40).expected_calls(3) == 40


def lookups(*, reach_back: bool, calls: int = 24) -> History:
    """A session of large lookups. Either each call uses the id the latest output names as
    ``next`` (a chain), or each uses another of the ids the first output listed (reaching back
    every time)."""
    first = {"ids": [f"K{i:04d}X" for i in range(1, calls)] if reach_back else ["K0001X"]}
    steps: list[tuple[Message, ...]] = [(UserMessage("Audit the records."),)]
    steps.append((call(0, "list"), ToolMessage(json.dumps(first), "c0")))
    for i in range(1, calls):
        key = f"K{i:04d}X"
        body = {"id": key, "rows": [f"row {k} of the record" for k in range(60)]}
        if not reach_back:
            body["next"] = f"K{i + 1:04d}X"
        steps.append((call(i, "get", id=key), ToolMessage(json.dumps(body), f"c{i}")))
    steps.append((AssistantMessage("Done."),))
    return build(steps)


def views(
    history: History, refold: RefoldStrategy | None = None, *, unseen: int = 0
) -> tuple[RefoldStrategy, list[View]]:
    refold, out = refold or RefoldStrategy(), []
    replayed = History(history.system, counter=history.counter, unseen_tokens=unseen)
    for step in history:
        if step.kind == "assistant":
            out.append(render_checked(refold, replayed))
        replayed.append_step(step)
        refold.observe(step, replayed)
    return refold, out


def test_an_output_the_agent_comes_back_to_is_kept_in_full_while_the_rest_is_masked() -> None:
    chain, _ = views(lookups(reach_back=False))
    assert chain.advances > 0 and chain._reach.hits == 0
    # an agent that reaches back at every call: the cost rule would mask nothing (each record
    # would be needed again too often: see the test of small outputs below); advancing by
    # three steps whatever it costs shows what is kept
    fixed = RefoldConfig(advance="fixed", every=3)
    refold, shown = views(lookups(reach_back=True), RefoldStrategy(fixed))
    assert refold.advances > 0 and refold._reach.drawn == {1}
    # every exposed call reached back into the list, kept in full after the first: each one
    # counts, as this agent is as likely to come back to what refold masks
    assert refold._reach.hits == refold._reach.exposed == 22
    listed = [f"K{i:04d}X" for i in range(1, 24)]
    for view in shown[1:]:  # from the first call after the list
        text = "\n".join(m.content or "" for m in view.messages)
        assert all(key in text for key in listed)  # the list of ids never leaves the view
    assert any(e.reason == "mask" for e in shown[-1].elisions)  # the records were masked


def test_what_a_restore_brought_back_stays_in_full_and_does_not_push_the_window() -> None:
    history = lookups(reach_back=False, calls=24)
    steps = list(history)
    restored = ToolMessage(steps[3].messages[1].content, "c99")
    session = build(
        [s.messages for s in steps[:13]]
        + [(call(99, "restore", step=3), restored)]
        + [s.messages for s in steps[13:]]
    )
    refold, shown = views(session)
    assert refold.advances > 0 and 13 in refold._reach.drawn
    record = json.loads(steps[3].messages[1].content)["rows"][-1]
    for view in shown[13:]:  # every call after the restore
        text = "\n".join(m.content or "" for m in view.messages)
        assert record in text  # the restored record is not masked again
    # the restore's result takes no place in the window: the lookup before it is still shown
    latest = json.loads(steps[12].messages[1].content)["rows"][-1]
    assert latest in "\n".join(m.content or "" for m in shown[13].messages)


def test_a_restore_ends_the_saving_of_the_piece_it_brings_back() -> None:
    """Per call, the saving (1,000 tokens read) beats the expected restore cost; over the 23
    calls expected it would pay the rewrite. But a piece needed with chance 0.2 per call is
    expected back after about 5 calls, and from then on saves nothing: it does not pay."""
    rule = CostRule(PRICE_TABLES["default"])
    bet = dict(rewritten=1000, saving=1000, calls=10, prompt=1000, restored=100)
    assert rule.pays(**bet, reach=0.0)
    assert not rule.pays(**bet, reach=0.2)
    p = PRICE_TABLES["default"]
    per_call = 1000 * p.cache_read - 0.2 * (1000 * p.cache_read + 100 * p.cache_write)
    assert rule.expected_calls(10) * per_call > 1000 * (p.cache_write - p.cache_read)


def test_the_restore_risk_is_shared_by_every_older_output_refold_may_mask() -> None:
    """The reach-back rate counts reach-backs into any output older than the window, so each
    of them (those kept in full aside) takes an even share of it: small outputs a stub would
    not shorten included, not only the ones masked so far."""
    record = json.dumps({"id": "R1", "rows": [f"row {k} of the record" for k in range(80)]})
    steps: list[tuple[Message, ...]] = [(UserMessage("Check the record, then ping."),)]
    steps.append((call(0, "get", id="R1"), ToolMessage(record, "c0")))
    steps += [(call(i, "ping", seq=f"P{i:02d}Q"), ToolMessage("ok", f"c{i}")) for i in range(1, 12)]
    steps.append((AssistantMessage("Done."),))
    refold = RefoldStrategy()
    weighed: list[tuple[float, float, int]] = []

    class Recording(CostRule):
        def pays(self, **figures: Any) -> bool:
            older = len(refold._state.observations) - 1  # the window holds one
            weighed.append((figures["reach"], refold._reach.rate, older))
            return super().pays(**figures)

    refold.rule = Recording(PRICE_TABLES["default"])
    views(build(steps), refold)
    assert refold._reach.drawn == set() and refold.advances > 0
    shared = [(reach, rate, older) for reach, rate, older in weighed if reach and older >= 3]
    assert shared
    assert all(reach == pytest.approx(rate / older) for reach, rate, older in shared)


def test_a_strategy_rebuilt_over_a_history_counts_the_calls_it_did_not_render() -> None:
    """The proxy rebuilds a session's strategy from its store after a restart: it observes the
    steps without rendering them. Its next render is the session's 25th call, not its first,
    for the calls to come (the Copernican estimate) as for what it records when it ends."""
    history = lookups(reach_back=False)
    calls: list[int] = []

    class Recording(CostRule):
        def pays(self, **figures: Any) -> bool:
            calls.append(figures["calls"])
            return super().pays(**figures)

    rebuilt = RefoldStrategy()
    rebuilt.rule = Recording(PRICE_TABLES["default"])
    replayed = History(history.system, counter=history.counter)
    for step in list(history)[:-1]:  # all but the closing reply
        replayed.append_step(step)
        rebuilt.observe(step, replayed)
    render_checked(rebuilt, replayed)
    assert calls and set(calls) == {25}  # the list and 23 lookups made: this is the 25th


def test_masking_one_output_pays_only_when_its_saving_outlives_its_restore() -> None:
    """Each masked output saves its tokens at every call until a restore brings it back,
    which reads the prompt and writes the output to the cache again: with a chance ``h`` per
    call, ``1 / h`` calls of saving against one restore, whatever the calls to come."""
    rule = CostRule(PRICE_TABLES["default"])
    assert rule.smallest_masked(5000, 0.05) == 667  # 5000 * 0.5 / (0.5 / 0.05 - 6.25)
    assert rule.smallest_masked(5000, 0.0) == 0
    assert rule.smallest_masked(5000, 0.1) == NEVER  # a restore's write outweighs any saving
    openai = CostRule(PRICE_TABLES["openai"])
    assert openai.smallest_masked(5000, 0.05) == 313  # 5000 * 1.25 / (1.25 / 0.05 - 5)


def record_and_note() -> History:
    """A large record, a small note naming the first ping's id, then pings that each use the id
    the latest output names (an agent that uses what it looked up)."""
    record = json.dumps({"id": "R1", "rows": [f"row {k} of the record" for k in range(300)]})
    note = json.dumps({"id": "N1", "tags": [f"t{k}" for k in range(40)], "next": "P02Q"})
    steps: list[tuple[Message, ...]] = [(UserMessage("Check the record and the note."),)]
    steps.append((call(0, "get", id="R1"), ToolMessage(record, "c0")))
    steps.append((call(1, "get", id="N1"), ToolMessage(note, "c1")))
    steps += [
        (call(i, "ping", seq=f"P{i:02d}Q"), ToolMessage(f"ok, next P{i + 1:02d}Q", f"c{i}"))
        for i in range(2, 8)
    ]
    steps.append((AssistantMessage("Done."),))
    return build(steps)


def test_an_output_too_small_for_its_restore_risk_stays_in_full_as_a_large_one_is_masked() -> None:
    """This agent may reach back: refold masks the large record, whose saving pays for that
    risk, and keeps the small note in full, whose saving does not; advancing at every step
    masks both."""
    history = record_and_note()
    refold, shown = views(history)
    assert refold.advances > 0
    assert [(e.steps, e.reason) for e in shown[-1].elisions] == [((1,), "mask")]
    note = history[2].messages[1].content
    assert note in "\n".join(m.content or "" for m in shown[-1].messages)
    _, shown = views(history, RefoldStrategy(RefoldConfig(advance="fixed")))
    assert {(e.steps, e.reason) for e in shown[-1].elisions} >= {((1,), "mask"), ((2,), "mask")}


def test_a_budget_masks_what_the_cost_rule_would_keep() -> None:
    history, refold = record_and_note(), RefoldStrategy()
    replayed = History(history.system, counter=history.counter)
    for step in history:
        if step.kind == "assistant":
            view = refold.render(replayed, 320)
            assert view.total_tokens <= 320
        replayed.append_step(step)
        refold.observe(step, replayed)
    assert refold.forced_compactions > 0
    assert {((1,), "mask"), ((2,), "mask")} <= {(e.steps, e.reason) for e in view.elisions}


def test_using_what_a_restore_brought_back_is_not_a_second_reach_back() -> None:
    orders = json.dumps({"orders": ["#W9001", "#W9002"]})
    history = build(
        [
            (UserMessage("Hi, I am alice_42."),),
            (call(1, "get_user", user_id="alice_42"), ToolMessage(orders, "c1")),
            (call(2, "get_order", order_id="#W9001"), ToolMessage('{"item": "lamp"}', "c2")),
            (call(3, "get_order", order_id="#W9001"), ToolMessage('{"item": "lamp"}', "c3")),
            (call(4, "restore", step=1), ToolMessage(orders, "c4")),
            # step 1's output, older than the window, holds it: but so does the restore
            (call(5, "get_order", order_id="#W9002"), ToolMessage('{"item": "desk"}', "c5")),
        ]
    )
    reach = Reach("You help customers.", window=1)
    for step in history:
        reach.learn(step)
    assert (reach.hits, reach.exposed) == (1, 3)  # the restore alone
