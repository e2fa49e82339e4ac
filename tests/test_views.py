from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings

from contextfold.core.errors import ViewError
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
from contextfold.core.view import (
    Elision,
    Provenance,
    View,
    check_view,
    render_and_check,
)
from contextfold.strategies.full import FullStrategy
from tests.gen import histories


@pytest.mark.slow
@settings(max_examples=200)
@given(histories())
def test_full_view_is_the_history_and_valid(history: History) -> None:
    view = render_checked(FullStrategy(), history)
    assert list(view.messages) == history.messages()
    assert view.total_tokens == history.system_tokens + sum(s.total_tokens for s in history)
    assert view.elisions == ()


@settings(max_examples=100)
@given(histories())
def test_incremental_render_equals_fresh_render(history: History) -> None:
    strategy = FullStrategy()
    replayed = History(history.system, counter=history.counter)
    for step in history:
        render_checked(strategy, replayed)  # render before each append, as an agent does
        replayed.append_step(step)
        strategy.observe(step, replayed)
    assert render_checked(strategy, replayed) == render_checked(FullStrategy(), history)


def _history() -> History:
    h = History(SystemMessage("sys"))
    h.append(UserMessage("hello"))
    call = ToolCall("c1", "read", "{}")
    h.append(AssistantMessage(None, tool_calls=(call,)), ToolMessage("out", "c1"))
    h.append(UserMessage("again"))
    return h


def _broken(view: View, messages: list[object]) -> View:
    n = len(messages)
    return dataclasses.replace(
        view,
        messages=tuple(messages),  # type: ignore[arg-type]
        tokens=(1,) * n,
        provenance=tuple(Provenance((i,)) for i in range(n)),
    )


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda m: m[1:], "system message is not first"),
        (lambda m: [*m[:3], *m[4:]], "not answered"),  # the result dropped
        (lambda m: [*m[:2], *m[3:4], *m[2:3], *m[4:]], "no immediately preceding"),  # swapped
        (lambda m: m[:-1], r"latest user message \(step 2\) is missing"),
        (lambda m: [*m, SystemMessage("late")], "only the first may be"),
        (lambda m: [*m[:1], UserMessage("  "), *m[1:]], "empty user message"),
    ],
)
def test_check_view_names_each_violation(mutate: object, needle: str) -> None:
    history = _history()
    good = FullStrategy().render(history, None)
    check_view(good, history, strategy="full")
    bad = _broken(good, mutate(list(good.messages)))  # type: ignore[operator]
    # keep the provenance of the latest user message where it still is
    if good.messages[-1] in bad.messages:
        pos = bad.messages.index(good.messages[-1])
        prov = list(bad.provenance)
        prov[pos] = Provenance((2,) if pos else ())
        bad = dataclasses.replace(bad, provenance=tuple(prov))
    with pytest.raises(ViewError, match=needle) as info:
        check_view(bad, history, strategy="broken")
    assert info.value.strategy == "broken"
    assert info.value.step == 2
    assert "strategy 'broken'" in str(info.value)


def test_length_mismatch_is_caught() -> None:
    history = _history()
    view = FullStrategy().render(history, None)
    with pytest.raises(ViewError, match="differ in length"):
        check_view(dataclasses.replace(view, tokens=view.tokens[:-1]), history, strategy="x")


def test_empty_tool_result_is_allowed() -> None:
    h = History(SystemMessage("sys"))
    h.append(UserMessage("go"))
    h.append(AssistantMessage("run", tool_calls=(ToolCall("a", "sh", "{}"),)), ToolMessage("", "a"))
    render_checked(FullStrategy(), h)


def test_an_empty_assistant_turn_is_a_legal_step_rendered_as_empty_text() -> None:
    """A model may answer with nothing; the turn is kept, and sent as an empty string (an
    upstream refuses an assistant message whose content is null and that calls no tool)."""
    h = History(SystemMessage("sys"))
    h.append(UserMessage("go"))
    h.append(AssistantMessage(None))
    h.append(AssistantMessage("   "))
    h.append(UserMessage("again"))
    view = render_checked(FullStrategy(), h)
    assert [to_openai(m) for m in view.messages[2:4]] == [
        {"role": "assistant", "content": ""},
        {"role": "assistant", "content": "   "},
    ]
    calls = to_openai(AssistantMessage(None, tool_calls=(ToolCall("a", "sh", "{}"),)))
    assert calls["content"] is None  # with tool calls, null content is what APIs expect


class _DropsLatestUser:
    name = "drops-user"

    def observe(self, step: object, history: object) -> None:
        pass

    def render(self, history: History, budget: int | None) -> View:
        view = FullStrategy().render(history, budget)
        return dataclasses.replace(
            view,
            messages=view.messages[:-1],
            tokens=view.tokens[:-1],
            provenance=view.provenance[:-1],
        )


def test_render_checked_refuses_an_invalid_strategy() -> None:
    with pytest.raises(ViewError, match=r"strategy 'drops-user'.*at step 2"):
        render_checked(_DropsLatestUser(), _history())


class _Scripted:
    """Returns the views it is given, in order (to drive the incremental check)."""

    name = "scripted"

    def __init__(self, views: list[View]) -> None:
        self.views = views

    def observe(self, step: object, history: object) -> None:
        pass

    def render(self, history: History, budget: int | None) -> View:
        return self.views.pop(0)


def test_incremental_check_still_catches_a_bad_tail_and_a_bad_prefix() -> None:
    history = _history()
    good = FullStrategy().render(history, None)
    bad_tail = dataclasses.replace(
        good,
        messages=(*good.messages, UserMessage(" ")),
        tokens=(*good.tokens, 1),
        provenance=(*good.provenance, Provenance(())),
    )
    strategy = _Scripted([good, bad_tail])
    render_checked(strategy, history)
    with pytest.raises(ViewError, match="empty user message"):
        render_checked(strategy, history)
    # the prefix changes (the tool result is dropped): the check starts again from the top
    msgs = list(good.messages)
    no_result = dataclasses.replace(
        good,
        messages=(*msgs[:3], *msgs[4:]),
        tokens=good.tokens[:3] + good.tokens[4:],
        provenance=good.provenance[:3] + good.provenance[4:],
    )
    strategy = _Scripted([good, no_result])
    render_checked(strategy, history)
    with pytest.raises(ViewError, match="not answered"):
        render_checked(strategy, history)


class _DropsStep:
    """Renders the whole history but the messages of step ``index`` (once it exists), with
    or without an elision that says so."""

    name = "drops-step"

    def __init__(self, index: int, *, elide: bool = False) -> None:
        self.index, self.elide, self.full = index, elide, FullStrategy()

    def observe(self, step: object, history: object) -> None:
        pass

    def render(self, history: History, budget: int | None) -> View:
        view = self.full.render(history, budget)
        keep = [i for i, p in enumerate(view.provenance) if self.index not in p.steps]
        elisions = ()
        if self.elide and self.index < len(history):
            tokens = history[self.index].total_tokens
            elisions = (Elision((self.index,), "dropped", tokens, None),)
        return dataclasses.replace(
            view,
            messages=tuple(view.messages[i] for i in keep),
            tokens=tuple(view.tokens[i] for i in keep),
            provenance=tuple(view.provenance[i] for i in keep),
            elisions=elisions,
        )


def test_a_step_left_out_without_an_elision_fails_the_check() -> None:
    """Dropping the tool step whole leaves a view that keeps every other invariant; before,
    it passed with 0 unrecoverable tokens."""
    history = _history()
    with pytest.raises(ViewError, match=r"steps 1 are neither shown nor covered by an elision"):
        render_checked(_DropsStep(1), history)
    view = render_checked(_DropsStep(1, elide=True), history)  # said so: it passes
    assert view.unrecoverable_tokens == history[1].total_tokens


def test_the_incremental_check_catches_a_step_dropped_as_the_view_grows() -> None:
    """The views of a growing history are checked incrementally (each appends to the one
    before) until step 3 arrives and is left out."""
    source = _history()
    history, strategy = History(source.system), _DropsStep(3)
    for step in source:
        history.append_step(step)
        render_and_check(strategy, history, None)
    history.append(AssistantMessage("On it."))  # step 3, which the strategy leaves out
    with pytest.raises(ViewError, match=r"steps 3 are neither shown"):
        render_and_check(strategy, history, None)


def test_provenance_naming_a_step_the_history_lacks_fails_the_check() -> None:
    history = _history()
    view = FullStrategy().render(history, None)
    prov = (*view.provenance[:-1], Provenance((2, 7)))
    with pytest.raises(ViewError, match=r"provenance names steps \[7\]"):
        check_view(dataclasses.replace(view, provenance=prov), history, strategy="x")
