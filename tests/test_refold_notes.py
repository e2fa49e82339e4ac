"""refold folds the agent's own text of a settled step into a note (strategies/refold/policy.py),
its calls kept, the text back with restore(step=N, part='text')."""

from __future__ import annotations

import json

from contextfold.agent import Agent
from contextfold.core.driver import Driver
from contextfold.core.history import History
from contextfold.core.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.core.pipeline import render_checked
from contextfold.core.tokens import ApproxCounter
from contextfold.core.view import View, check_view
from contextfold.envs import FilesEnv
from contextfold.models import ScriptedModel
from contextfold.strategies.refold import RefoldStrategy
from contextfold.strategies.refold.policy import NOTE_CHARS
from contextfold.strategies.registry import build_strategy
from contextfold.strategies.restore import restore_text

LONG = "THOUGHT: I read file {i} to find where the parser drops the last token. " + (
    "It may be the tokenizer, the buffer or the end-of-input check. " * 6
)


def text_of(i: int) -> str:
    """The agent's text at step ``i``: long; every third one ends with a PROGRESS line."""
    text = LONG.format(i=i)
    return text + f"\nPROGRESS: read f{i}.py, parser fine" if i % 3 == 0 else text


def session(n: int = 12, *, short: bool = False) -> History:
    history = History(SystemMessage("You fix code."), counter=ApproxCounter())
    history.append(UserMessage("Fix the parser."))
    for i in range(1, n):
        call = ToolCall(f"c{i}", "bash", json.dumps({"command": f"cat f{i}.py"}))
        text = "ok" if short else text_of(i)
        output = f"f{i}.py\n" + "\n".join(f"line {k} of f{i}" for k in range(40))
        history.append(AssistantMessage(text, tool_calls=(call,)), ToolMessage(output, f"c{i}"))
    return history


def fixed(**config: object) -> RefoldStrategy:
    strategy = build_strategy({"type": "refold", "advance": "fixed", **config})
    assert isinstance(strategy, RefoldStrategy)
    return strategy


def agent_messages(view: View, step: int) -> list[AssistantMessage]:
    return [
        m
        for m, p in zip(view.messages, view.provenance, strict=True)
        if isinstance(m, AssistantMessage) and p.steps == (step,)
    ]


def test_a_settled_step_without_progress_becomes_its_first_line_with_its_calls() -> None:
    history = session()
    view = render_checked(fixed(), history)
    (shown,) = agent_messages(view, 1)
    first = text_of(1).splitlines()[0][:NOTE_CHARS]
    assert shown.content == f"[step 1 note] {first} (restore(step=1, part='text') shows the text)"
    recorded = history[1].message
    assert isinstance(recorded, AssistantMessage)
    assert shown.tool_calls == recorded.tool_calls  # the calls stay as they are
    notes = [e for e in view.elisions if e.reason == "note"]
    assert (1,) in {e.steps for e in notes}
    assert all(str(e.restore) == f"restore(step={e.steps[0]}, part='text')" for e in notes)
    assert view.unrecoverable_tokens == 0


def test_a_progress_line_is_the_note() -> None:
    view = render_checked(fixed(), session())
    (shown,) = agent_messages(view, 3)
    assert shown.content == (
        "[step 3 note] read f3.py, parser fine (restore(step=3, part='text') shows the text)"
    )


def test_the_window_keeps_the_latest_steps_text_whole() -> None:
    history = session()
    view = render_checked(fixed(), history)
    last = len(history) - 1
    assert agent_messages(view, last)[0].content == history[last].message.content
    assert last not in {e.steps[0] for e in view.elisions if e.reason == "note"}


def test_a_note_stands_in_only_where_it_is_shorter() -> None:
    history = session(short=True)
    view = render_checked(fixed(), history)
    assert not [e for e in view.elisions if e.reason == "note"]
    assert [m.content for m in agent_messages(view, 1)] == ["ok"]
    assert [e for e in view.elisions if e.reason == "mask"]  # the outputs are still stubbed


def test_restore_part_text_gives_the_exact_text_back_through_the_driver() -> None:
    history = session()
    strategy = fixed()
    driver = Driver(strategy, history)
    view = driver.prepare().view
    note = next(e for e in view.elisions if e.reason == "note" and e.steps == (3,))
    assert note.restore is not None
    answer = driver.call_tool("restore", json.dumps(note.restore.as_dict()))
    assert answer is not None and not answer.error
    assert answer.text == history[3].message.content  # PROGRESS line and all
    assert driver.answer("restore", {"step": 3}) == history[3].results[0].content
    assert strategy.restores == 2


def test_bad_parts_are_refused_in_the_callers_terms() -> None:
    history = session(3)
    text, step = restore_text({"step": 1, "part": "output"}, history)
    assert step is None
    assert text == "error: part must be one of 'text', 'calls', 'thinking', got 'output'"
    assert restore_text({"step": 1, "part": "text", "lines": "1"}, history)[0] == (
        "[step 1, lines 1-1 of 1]\n" + text_of(1)
    )
    calls = restore_text({"step": 1, "part": "calls"}, history)[0]
    assert calls == 'bash({"command": "cat f1.py"})'
    assert restore_text({"step": 0, "part": "calls"}, history) == ("", 0)  # a user step: none
    assert "there is no step 9" in restore_text({"step": 9, "part": "text"}, history)[0]


def test_the_restore_schema_names_the_part() -> None:
    """Offered with keep_text=true too: a budget may still fold a run of steps (.runs)."""

    def properties(strategy: RefoldStrategy) -> set[str]:
        return set(strategy.tools()[0]["function"]["parameters"]["properties"])

    assert properties(fixed()) == {"step", "lines", "part"}
    assert properties(fixed(keep_text=True)) == {"step", "lines", "part"}
    assert properties(fixed(cut=0)) == {"step", "part"}


def test_keep_text_keeps_the_agents_text_whole() -> None:
    history = session()
    kept = render_checked(fixed(keep_text=True), history)
    folded = render_checked(fixed(), history)
    assert not [e for e in kept.elisions if e.reason == "note"]
    for i in range(1, len(history)):
        assert agent_messages(kept, i)[0].content == history[i].message.content
    assert folded.total_tokens < kept.total_tokens


def test_every_view_of_a_growing_session_passes_the_view_check() -> None:
    history = session(30)
    for spec in ({}, {"keep_text": True}, {"advance": "cost"}):
        strategy = fixed(**spec)
        replayed = History(history.system, counter=history.counter)
        for step in history:
            replayed.append_step(step)
            strategy.observe(step, replayed)
            view = strategy.render(replayed, None)
            check_view(view, replayed, strategy="refold", tools={"restore"})
            for e in view.elisions:
                assert e.restore is not None
                assert restore_text(e.restore.as_dict(), replayed)[1] == e.steps[0]


def test_an_agent_restores_its_own_text_in_the_real_loop() -> None:
    files = {f"f{i}.py": f"x = {i}\n" * 30 for i in range(1, 6)}

    def read(i: int) -> AssistantMessage:
        call = ToolCall(f"c{i}", "read_file", json.dumps({"path": f"f{i}.py"}))
        return AssistantMessage(text_of(i), tool_calls=(call,))

    back = ToolCall("r", "restore", json.dumps({"step": 1, "part": "text"}))
    replies = [*map(read, range(1, 6)), AssistantMessage(None, tool_calls=(back,))]
    model = ScriptedModel([*replies, AssistantMessage("done")])
    strategy = fixed()
    history = History(SystemMessage("You fix code."))
    agent = Agent(model, strategy, FilesEnv(files), history=history, keep_views=True)
    agent.run("Fix the parser.")
    before = agent.result.views[5]
    assert any(str(e.restore) == "restore(step=1, part='text')" for e in before.elisions)
    assert history[6].results[0].content == history[1].message.content
    assert any(
        t["function"]["name"] == "restore" and "part" in t["function"]["parameters"]["properties"]
        for t in model.calls[0].tools
    )


def test_notes_alone_never_make_the_first_advance_and_ride_along_after_it() -> None:
    """The first advance (the marker note added, the prompt written again) is made by outputs
    only; once the session folds, the notes come with its advances."""
    chatty = History(SystemMessage("You fix code."), counter=ApproxCounter())
    chatty.append(UserMessage("Fix the parser."))
    for i in range(1, 40):  # long texts, one-word outputs: nothing but notes to save
        call = ToolCall(f"c{i}", "bash", json.dumps({"command": f"test -f f{i}.py"}))
        chatty.append(AssistantMessage(text_of(i), tool_calls=(call,)), ToolMessage("ok", f"c{i}"))
    for history, folds in ((chatty, False), (session(40), True)):
        strategy = build_strategy("refold")
        assert isinstance(strategy, RefoldStrategy)
        replayed = History(history.system, counter=history.counter)
        for step in history:
            replayed.append_step(step)
            strategy.observe(step, replayed)
            view = render_checked(strategy, replayed)
        assert bool(strategy.advances) == folds
        assert bool([e for e in view.elisions if e.reason == "note"]) == folds
