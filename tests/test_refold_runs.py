"""Any history fits any sane budget: refold folds runs of settled steps into one line each
(strategies/refold/runs.py), in a loop and through the real proxy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest

from contextfold.core.history import History
from contextfold.core.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
    from_openai,
    to_openai,
)
from contextfold.core.pipeline import render_checked
from contextfold.core.tokens import ApproxCounter
from contextfold.core.view import View
from contextfold.strategies.registry import build_strategy
from contextfold.strategies.restore import restore_text
from contextfold.testing.upstreams.chat import ScriptedServer
from tests._serve import client, serving

TASK = "Fix the parser. " + "The tokenizer must keep the last token of every input. " * 20


def conversation(pairs: int) -> History:
    """A system prompt, the task, then ``pairs`` agent steps, each one call and its output."""
    history = History(SystemMessage("You fix code."), counter=ApproxCounter())
    history.append(UserMessage(TASK))
    for i in range(1, pairs + 1):
        call = ToolCall(f"c{i}", "bash", json.dumps({"command": f"sed -n 1,20p src/m{i}.py"}))
        text = f"THOUGHT: module {i} may drop the token.\nI print its head to check."
        output = "\n".join(f"{k}: value_{i}_{k} = parse(tokens[{k}])" for k in range(20))
        history.append(AssistantMessage(text, tool_calls=(call,)), ToolMessage(output, f"c{i}"))
    return history


def runs(view: View) -> list[str]:
    texts = [m.content or "" for m in view.messages]
    return [t for t in texts if t.startswith("[steps ")]


def floor(history: History) -> int:
    """The system prompt, the task and the window (the latest step with outputs) in full."""
    return history.system_tokens + history[0].total_tokens + history[-1].total_tokens


@pytest.mark.parametrize("keep_text", [False, True])
def test_a_long_session_fits_the_budget_and_every_folded_step_comes_back(keep_text: bool) -> None:
    history = conversation(600)
    strategy = build_strategy({"type": "refold", "keep_text": keep_text})
    view = render_checked(strategy, history, 6000)  # the view check runs too
    assert view.total_tokens <= 6000 < sum(s.total_tokens for s in history.steps)
    (line,) = runs(view)
    assert line.startswith("[steps 1-") and "restore(step=N)" in line
    assert view.messages[1] == history[0].message  # the task stays
    last = history[-1].results[0].content
    assert view.messages[-1].content == f"[step 600]\n{last}"  # the window stays in full
    folded = [e for e in view.elisions if e.reason == "run"]
    for e in folded:
        assert e.restore is not None
        assert restore_text(e.restore.as_dict(), history)[1] == e.steps[0]
    step = history[5]
    head = step.message
    assert isinstance(head, AssistantMessage)
    pieces = {str(e.restore): e for e in folded if e.steps == (5,)}
    assert set(pieces) == {
        "restore(step=5)",
        "restore(step=5, part='text')",
        "restore(step=5, part='calls')",
    }
    assert restore_text({"step": 5, "part": "text"}, history)[0] == head.content
    assert restore_text({"step": 5}, history)[0] == step.results[0].content
    calls = restore_text({"step": 5, "part": "calls"}, history)[0]
    assert calls == f"bash({head.tool_calls[0].arguments})"


def test_a_growing_session_stays_within_a_budget_just_over_the_floor() -> None:
    history = conversation(300)
    budget = floor(history) + 400  # the floor, the marker note and a run line, with room
    strategy = build_strategy("refold")
    replayed = History(history.system, counter=history.counter)
    lines = set()
    for step in history:
        replayed.append_step(step)
        strategy.observe(step, replayed)
        view = render_checked(strategy, replayed, budget)
        assert view.total_tokens <= budget
        if step.results:  # the window, the latest output, stays in full
            labelled = f"[step {step.index}]\n{step.results[0].content}"
            assert view.messages[-1].content in (step.results[0].content, labelled)
        lines.update(runs(view))
    assert len(lines) > 1  # the run grew as the session did (slack keeps it from every call)
    assert len(lines) < 100


def _openai_messages(history: History) -> Any:  # what a client sends, as dicts
    out = [to_openai(history.system)] if history.system else []
    return out + [to_openai(m) for step in history.steps for m in step.messages]


def test_a_2000_message_conversation_fits_serve_budget_20000(tmp_path: Path) -> None:
    history = conversation(999)
    messages = _openai_messages(history)
    assert len(messages) == 2000
    with ScriptedServer() as up, serving(up, tmp_path / "s.db", budget=20000) as proxy:
        reply = client(proxy).chat.completions.create(model="m", messages=messages)
        assert reply.choices[0].message.content
        sent = up.requests[-1][1]["messages"]
    counter = History(None, counter=ApproxCounter())
    assert sum(counter.count(from_openai(m)) for m in sent) <= 20000
    assert any(m["content"].startswith("[steps 1-") for m in sent if m.get("content"))
    assert sent[1] == messages[1]  # the task
    assert sent[-1]["content"] == f"[step 999]\n{messages[-1]['content']}"  # the latest output


def test_a_budget_below_the_floor_is_refused_with_context_length_exceeded(
    tmp_path: Path,
) -> None:
    history = conversation(999)
    budget = history.system_tokens + history[0].total_tokens - 1  # not even the task fits
    with ScriptedServer() as up, serving(up, tmp_path / "s.db", budget=budget) as proxy:
        with pytest.raises(openai.BadRequestError) as info:
            client(proxy).chat.completions.create(model="m", messages=_openai_messages(history))
        assert up.requests == []  # nothing was sent upstream
    assert info.value.code == "context_length_exceeded"
    assert f"over the budget of {budget:,}" in str(info.value)
