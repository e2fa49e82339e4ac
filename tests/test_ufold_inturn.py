"""ufold's in-turn folding (long tool outputs trimmed before they are first sent) and its
rebuild rule (a fold at a user message is adopted only when it pays for the cache rewrite),
with ScriptedModel folders and the model-free variant."""

from __future__ import annotations

from pathlib import Path

from contextfold.core.history import History
from contextfold.core.messages import (
    AssistantMessage,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from contextfold.core.pipeline import render_checked
from contextfold.core.store import SQLiteStore
from contextfold.core.view import View, render_and_check
from contextfold.models import ScriptedModel
from contextfold.strategies.folding import Folder
from contextfold.strategies.registry import build_strategy
from contextfold.strategies.ufold import UfoldStrategy
from tests._ufold_data import OTHERS, TASK, airline, call, noisy

REAL = '{"reservation_id": "ABC123", "flight": "HAT170", "payment": "credit_card_4421486"}'
NOISY = noisy(REAL)


def ufold(spec: str = "ufold folder=none") -> UfoldStrategy:
    built = build_strategy(spec)
    assert isinstance(built, UfoldStrategy)
    return built


def session(store: SQLiteStore | None = None) -> History:
    return airline(call(1, "get_reservation", {"id": "ABC123"}, NOISY), store=store)


def sent(s: UfoldStrategy, history: History, budget: int | None = None) -> View:
    s.fold(history, budget)
    return render_and_check(s, history, budget)  # the render, the budget a hint


def test_a_long_output_keeps_its_matching_lines_and_the_rest_is_restorable() -> None:
    s, history = ufold(), session()
    view = sent(s, history)
    result = view.messages[-1]
    assert isinstance(result, ToolMessage) and result.tool_call_id == "c1"
    assert REAL in result.content and "restore(step=1)" in result.content
    assert "ZZ0005" not in result.content and "[30 lines left out]" in result.content
    (elision,) = view.elisions
    assert (
        elision.steps == (1,) and elision.tokens > 0 and str(elision.restore) == "restore(step=1)"
    )
    full = render_checked(build_strategy("full"), history, None)
    assert view.total_tokens + elision.tokens == full.total_tokens
    assert s.call_tool("restore", {"step": 1}, history) == NOISY  # the dropped value comes back
    history.append(*call(2, "restore", {"step": "1"}, NOISY))
    assert sent(s, history).messages[-1].content == NOISY  # a restore is never trimmed


def test_nothing_from_the_user_or_the_agent_is_dropped() -> None:
    s, history = ufold(), session()
    long_ask = "\n".join(f"Also note item {i}: please keep it in mind." for i in range(60))
    history.append(UserMessage(long_ask))
    history.append(AssistantMessage("\n".join(f"Noted {i}." for i in range(60))))
    view = sent(s, history)
    for step in history.steps:
        if not step.results:
            assert step.message in view.messages
    assert all(e.steps == (1,) for e in view.elisions)


def test_the_prefix_is_unchanged_across_calls_within_a_turn() -> None:
    s, history = ufold(), session()
    first = sent(s, history)
    history.append(*call(2, "get_flight", {"number": "HAT170"}, NOISY.replace("ABC123", "HAT170")))
    second = sent(s, history)
    history.append(AssistantMessage("HAT170 is available on 2024-05-20."))
    third = sent(s, history)
    assert second.messages[: len(first.messages)] == first.messages
    assert third.messages[: len(second.messages)] == second.messages
    assert "ZZ0005" not in str(second.messages[-1].content)  # the new output was trimmed as it came


def test_short_outputs_and_outputs_without_a_match_are_sent_whole() -> None:
    s = ufold("ufold folder=none inturn_min=100000")
    history = session()
    assert sent(s, history).messages[-1].content == NOISY
    history = session()
    history.append(*call(2, "list_all", {}, "\n".join(OTHERS)))
    view = sent(ufold(), history)
    assert view.messages[-1].content == "\n".join(OTHERS)
    off = sent(ufold("ufold folder=none inturn=false"), session())
    assert off.messages[-1].content == NOISY and not off.elisions
    assert sent(ufold("ufold folder=none extract=false"), session()).messages[-1].content == NOISY


def test_a_rebuild_that_does_not_pay_keeps_the_prefix_and_a_forced_one_is_adopted() -> None:
    s, history = ufold(), session()
    before = sent(s, history)
    history.append(AssistantMessage("Which date exactly?"))
    history.append(UserMessage("The 20th of May."))
    after = sent(s, history)
    (record,) = history.folds
    assert record.accepted and record.output["adopted"] is False
    assert record.output["rewritten"] > 0 and not record.output["forced"]
    assert after.messages[: len(before.messages)] == before.messages  # only appended
    history = session()
    sent(s := ufold(), history)
    history.append(AssistantMessage("Which date exactly?"))
    history.append(UserMessage("The 20th of May."))
    forced = sent(s, history, budget=before.total_tokens // 2)
    (record,) = history.folds
    assert record.output["adopted"] is True and record.output["forced"] is True
    assert any("[Selected context" in (m.content or "") for m in forced.messages)


def test_in_turn_trims_with_a_folder_and_after_reopening(tmp_path: Path) -> None:
    answers = iter(['{"summary": "Move ABC123; under 300.", "todo": []}', '{"blocks": []}'])
    s = ufold("ufold folder=scripted rebuild=always")
    s.folder = Folder(ScriptedModel(lambda messages, tools: next(answers)))
    store = SQLiteStore(tmp_path / "s.db")
    history = session(store)
    history.append(AssistantMessage("Which date exactly?"))
    history.append(UserMessage("The 20th of May."))
    history.append(*call(2, "get_flight", {"number": "HAT170"}, NOISY.replace("ABC123", "HAT170")))
    view = sent(s, history)
    assert "adopted" not in history.folds[-1].output  # rebuild=always: no rule applied
    assert "ZZ0005" not in str(view.messages[-1].content) and len(view.elisions) >= 4
    reopened = History.open(store, "s")
    again = render_checked(ufold("ufold folder=scripted rebuild=always"), reopened, None)
    assert again.messages == view.messages and again.elisions == view.elisions


def test_a_rebuild_that_pays_is_adopted_without_a_budget() -> None:
    """Thirty calls whose outputs name nothing the user asked about: at the next user message
    the saving over the calls expected outweighs rewriting the cache and a restore's risk."""
    s = ufold()
    history = History(SystemMessage("You are an airline agent."))
    history.append(UserMessage(TASK))
    for i in range(30):
        history.append(*call(i, "ping", {}, f"pong: all systems nominal, round {i}"))
        sent(s, history)
    history.append(AssistantMessage("All checks passed."))
    history.append(UserMessage("Thanks. Now the 20th of May, please."))
    view = sent(s, history)
    (record,) = history.folds
    assert record.output["adopted"] is True and not record.output["forced"]
    assert record.output["saving"] > record.output["rewritten"] // 2
    assert any("[Selected context" in (m.content or "") for m in view.messages)
    assert {e.steps[0] for e in view.elisions} == set(range(32))


def test_a_folder_is_not_asked_when_no_rebuild_could_pay() -> None:
    """A short session: even a rebuild keeping only the current turn could not pay for the
    cache rewrite and the folder's call, so the folder is not called; a budget that forces a
    rebuild asks it."""
    asked: list[int] = []

    def reply(messages: object, tools: object) -> str:
        asked.append(1)
        return '{"summary": "Move ABC123 to May 20; under 300.", "todo": []}'

    s = ufold("ufold folder=scripted extract=false")
    s.folder = Folder(ScriptedModel(reply))
    history = session()
    before = sent(s, history)
    history.append(AssistantMessage("Which date exactly?"))
    history.append(UserMessage("The 20th of May."))
    after = sent(s, history)
    (record,) = history.folds
    assert not asked and record.output == {"adopted": False, "asked": False}
    assert not record.calls and after.messages[: len(before.messages)] == before.messages
    history = session()
    sent(s := ufold("ufold folder=scripted extract=false"), history)
    s.folder = Folder(ScriptedModel(reply))
    history.append(AssistantMessage("Which date exactly?"))
    history.append(UserMessage("The 20th of May."))
    sent(s, history, budget=before.total_tokens // 2)
    assert asked and history.folds[-1].output["adopted"] is True
