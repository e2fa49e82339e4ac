"""A view over the budget is never returned silently, under every registered strategy: the
strategy compacts, or a ContextBudgetError says by how much and what to do. The same rule in
Session.prepare, render_checked and the proxy (a 400 in OpenAI's shape) as in the agent loop;
a folding strategy folds through prepare, and a refused fold is visible."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import openai
import pytest

from contextfold.core.errors import ContextBudgetError
from contextfold.core.history import History
from contextfold.core.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
    to_openai,
)
from contextfold.core.pipeline import render_checked
from contextfold.core.protocols import Compacting, Strategy
from contextfold.core.view import View
from contextfold.session import Prepared, Session
from contextfold.strategies.folding import FolderSource
from contextfold.strategies.registry import STRATEGIES, build_strategy
from contextfold.testing.upstreams.chat import ScriptedServer
from tests._serve import client, serving

FOLDERS = FolderSource(default="scripted")


def work_history(steps: int = 14, lines: int = 60) -> History:
    """A coding session: each step reads a different file of ``lines`` distinct lines."""
    history = History(SystemMessage("You fix bugs. Use the tools."))
    history.append(UserMessage("Fix the failing test in the repository."))
    for i in range(steps):
        call = ToolCall(f"c{i}", "read_file", {"path": f"src/mod{i}.py"})
        body = "\n".join(f"def f{i}_{k}(x): return x * {k} + {i}  # line {k}" for k in range(lines))
        history.append(
            AssistantMessage(f"Reading mod{i}.", tool_calls=(call,)), ToolMessage(body, f"c{i}")
        )
    history.append(UserMessage("Any progress?"))
    return history


def full_tokens(history: History) -> int:
    return history.system_tokens + sum(s.total_tokens for s in history.steps)


def drive(
    strategy: Strategy, history: History, render: Callable[[Strategy, History], View]
) -> tuple[list[View], ContextBudgetError | None]:
    """Replay ``history`` into a fresh one, rendering before every assistant step and at the
    end, as a loop does; stops at the first budget error."""
    replayed = History(history.system, counter=history.counter)
    views: list[View] = []
    for step in history.steps:
        if step.kind == "assistant":
            try:
                views.append(render(strategy, replayed))
            except ContextBudgetError as exc:
                return views, exc
        strategy.observe(replayed.append_step(step), replayed)
    try:
        views.append(render(strategy, replayed))
    except ContextBudgetError as exc:
        return views, exc
    return views, None


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_render_checked_compacts_or_refuses_under_every_strategy(name: str) -> None:
    history = work_history()
    budget = full_tokens(history) // 3
    strategy = build_strategy(name, folders=FOLDERS)
    views, error = drive(strategy, history, lambda s, h: render_checked(s, h, budget))
    assert all(v.total_tokens <= budget for v in views), name
    if error is not None:
        assert error.budget == budget and error.tokens > budget
        assert f"{error.tokens:,} tokens" in str(error) and f"{budget:,}" in str(error)
        assert "raise the budget" in str(error)
        assert isinstance(strategy, Compacting) or not error.compacted
    else:
        assert len(views) == 15


def test_a_strategy_that_cannot_compact_says_so() -> None:
    history = work_history()
    with pytest.raises(ContextBudgetError, match="over the budget of 1,000 and it cannot compact"):
        render_checked(build_strategy("full"), history, 1000)


def test_a_summarizing_strategy_over_the_budget_folds_to_fit() -> None:
    history = work_history()
    strategy = build_strategy("summary", folders=FOLDERS)
    budget = full_tokens(history) // 3
    view = render_checked(strategy, history, budget)
    assert view.total_tokens <= budget < full_tokens(history)
    assert [r.accepted for r in history.folds] == [True]  # the forced fold, in the log


def test_the_proxy_answers_a_view_over_its_budget_with_context_length_exceeded(
    tmp_path: Path,
) -> None:
    big = " ".join(f"word{i}" for i in range(3000))
    with ScriptedServer() as up, serving(up, tmp_path / "s.db", strategy="full", budget=500) as px:
        with pytest.raises(openai.BadRequestError) as info:
            client(px).chat.completions.create(
                model="m", messages=[{"role": "user", "content": big}]
            )
        assert up.requests == []  # nothing was sent upstream
    error = info.value
    assert error.code == "context_length_exceeded" and error.param == "messages"
    assert "over the budget of 500" in str(error)


def calls_of(history: History) -> list[list[dict[str, object]]]:
    """The conversation a client would send before each assistant step, and at the end."""
    sent = [to_openai(history.system)] if history.system else []
    out = []
    for step in history.steps:
        if step.kind == "assistant":
            out.append(list(sent))
        sent += [to_openai(m) for m in step.messages]
    return [*out, sent]


def prepare_all(session: Session, history: History) -> tuple[list[Prepared], Exception | None]:
    done: list[Prepared] = []
    for messages in calls_of(history):
        try:
            done.append(session.prepare(messages))
        except ContextBudgetError as exc:
            return done, exc
    return done, None


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_prepare_compacts_or_refuses_under_every_strategy(name: str) -> None:
    history = work_history()
    budget = full_tokens(history) // 3
    session = Session(name, budget=budget, folder="scripted")
    done, error = prepare_all(session, history)
    assert all(p.tokens <= budget for p in done), name
    assert all(p.full_tokens > p.tokens for p in done if p.compactions)
    if error is None:
        assert len(done) == 15 and done[-1].full_tokens == full_tokens(history)
    else:
        assert isinstance(error, ContextBudgetError) and error.budget == budget
        assert session.history is not None  # the refused call's steps are kept: nothing lost
        assert len(session.history) == len(done) + 1


@pytest.mark.parametrize("name", ["summary", "compact"])
def test_a_folding_strategy_folds_through_prepare_under_the_budget(name: str) -> None:
    history = work_history(steps=40)
    budget = full_tokens(history) // 3
    session = Session(name, budget=budget, folder="scripted")
    done, error = prepare_all(session, history)
    assert error is None and max(p.tokens for p in done) <= budget
    assert sum(len(p.folds) for p in done) >= 2  # folded as it went, not only when forced
    assert session.history is not None and len(session.history.folds) >= 2


def test_a_refused_fold_is_visible_on_what_prepare_returns() -> None:
    history = work_history()
    session = Session("iterresearch", budget=full_tokens(history) // 3, folder="scripted")
    done, _ = prepare_all(session, history)
    refused = [r for p in done for r in p.folds_refused]
    assert refused and all(r.reason and not r.accepted for r in refused)
    assert session.history is not None
    assert [r for r in session.history.folds if not r.accepted] == refused
