"""When refold bets on stubs at all: not with a user in the loop, nor in a session its system
prompt leads (docs/strategies/refold.md, "When stubs wait")."""

from __future__ import annotations

from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage, Message, ToolMessage, UserMessage
from contextfold.core.meter import PRICE_TABLES
from contextfold.core.view import View
from contextfold.strategies.refold.advance import Rent
from contextfold.strategies.refold.cost import NEVER, CostRule
from contextfold.strategies.refold.reach import Reach
from tests.test_refold_reach import build, call, lookups, views


def masked(shown: list[View]) -> int:
    return sum(e.reason == "mask" for v in shown for e in v.elisions)


def with_exchange(history: History, after: int) -> list[tuple[Message, ...]]:
    """The steps of ``history`` with the agent asking the user and the user answering after
    step ``after``."""
    steps = [s.messages for s in history]
    asked = (AssistantMessage("I found the first records. Shall I go on?"),)
    return [*steps[: after + 1], asked, (UserMessage("Yes, go on."),), *steps[after + 1 :]]


def test_reach_counts_a_user_answering_the_agent_once_outputs_came() -> None:
    task = (UserMessage("Audit the records."),)
    looked = (call(0, "get", id="K1"), ToolMessage("K1: fine", "c0"))
    asked, answer = (AssistantMessage("Shall I go on?"),), (UserMessage("Yes."),)
    cases: dict[str, list[tuple[Message, ...]]] = {
        "a reply before any output": [task, asked, answer],
        "a user message after a tool call": [task, looked, answer],
        "a user answering the agent after an output": [task, looked, asked, answer],
    }
    served: dict[str, bool] = {}
    for name, steps in cases.items():
        reach = Reach("", window=1)
        for step in build(steps):
            reach.learn(step)
        served[name] = reach.serves_user
    assert served == {
        "a reply before any output": False,
        "a user message after a tool call": False,
        "a user answering the agent after an output": True,
    }


def test_with_a_user_in_the_loop_settled_outputs_stay_in_full() -> None:
    alone, shown = views(lookups(reach_back=False))
    assert alone.advances > 0 and masked(shown) > 0  # the agent alone: its outputs are stubbed
    served, shown = views(build(with_exchange(lookups(reach_back=False), after=4)))
    assert served._reach.serves_user
    assert masked(shown) == 0  # no output is stubbed (what is not a bet still is: notes, dedup)


def test_stubs_wait_in_a_session_its_system_prompt_leads() -> None:
    """Decided when the first output leaves the window, once: a bet put off until the
    outputs outweigh the system prompt would be made late, when the session may be ending."""
    session = lookups(reach_back=False)
    policy = "Follow the audit policy: check every row, report every gap. " * 150
    steps = [s.messages for s in session]
    refold, shown = views(build(steps, system=policy))
    assert session.system_tokens < 100 and refold._system_led
    outputs = sum(sum(s.tokens) for s in session)
    assert outputs > 2 * refold._history.system_tokens  # type: ignore[union-attr]
    assert masked(shown) == 0  # though the outputs came to outweigh the policy
    alone, _ = views(session)
    assert alone._system_led is False
    rule = CostRule(PRICE_TABLES["default"])
    rent = Rent(rule, Reach("", window=1, prior=(0.1, 10.0)))  # a rate of 0.01
    assert rent.smallest_masked(5000, 5, system_led=True) == NEVER
    assert rent.smallest_masked(5000, 5) == rule.smallest_masked(5000, 0.002) < 300
