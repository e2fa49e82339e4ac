"""When refold bets on stubs at all: not in a session its system prompt leads
(docs/strategies/refold.md, "When stubs wait")."""

from __future__ import annotations

from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage, Message, UserMessage
from contextfold.core.meter import PRICE_TABLES
from contextfold.core.view import View
from contextfold.strategies.refold.advance import Change, Rent
from contextfold.strategies.refold.cost import NEVER, CostRule
from contextfold.strategies.refold.reach import Reach
from tests.test_refold_reach import build, lookups, views


def masked(shown: list[View]) -> int:
    return sum(e.reason == "mask" for v in shown for e in v.elisions)


def with_exchange(history: History, after: int) -> list[tuple[Message, ...]]:
    """The steps of ``history`` with the agent asking the user and the user answering after
    step ``after``."""
    steps = [s.messages for s in history]
    asked = (AssistantMessage("I found the first records. Shall I go on?"),)
    return [*steps[: after + 1], asked, (UserMessage("Yes, go on."),), *steps[after + 1 :]]


def test_stubs_wait_in_a_session_its_system_prompt_leads() -> None:
    """Decided when the first output leaves the window, once: a bet put off until the
    outputs outweigh the system prompt would be made late, when the session may be ending."""
    session = lookups(reach_back=False)
    policy = "Follow the audit policy: check every row, report every gap. " * 150
    steps = [s.messages for s in session]
    refold, shown = views(build(steps, system=policy))
    assert session.system_tokens < 100 and refold._boundary.system_led
    outputs = sum(sum(s.tokens) for s in session)
    assert outputs > 2 * refold._history.system_tokens  # type: ignore[union-attr]
    assert masked(shown) == 0  # though the outputs came to outweigh the policy
    alone, _ = views(session)
    assert alone._boundary.system_led is False
    rule = CostRule(PRICE_TABLES["default"])
    rent = Rent(rule, Reach("", window=1, prior=(0.1, 10.0)))  # a rate of 0.01
    assert rent.smallest_masked(5000, 5, system_led=True) == NEVER
    assert rent.smallest_masked(5000, 5) == rule.smallest_masked(5000, 0.002) < 300


def test_a_prompt_the_log_leaves_out_leads_the_session_as_a_shown_one() -> None:
    """Tokens every call sends that the history does not hold (an agent CLI's system prompt
    and tool schemas, ``History.unseen_tokens``) weigh as a shown system prompt does: the
    session is system-led and no output is masked; a restore is priced on the whole prompt."""
    session = lookups(reach_back=False)
    _, shown = views(session)
    assert masked(shown) > 0
    outputs = sum(sum(s.tokens) for s in session)
    refold, hidden = views(session, unseen=outputs)
    assert refold._boundary.system_led and masked(hidden) == 0
    rule = CostRule(PRICE_TABLES["default"])
    reach = Reach("", window=1, prior=(0.1, 10.0))
    change = Change(rewritten=1000, saving=400, prompt=2000, pieces=[400])
    assert Rent(rule, reach).pays(change, calls=20, maskable=5)
    assert not Rent(rule, reach, unseen=200_000).pays(change, calls=20, maskable=5)
