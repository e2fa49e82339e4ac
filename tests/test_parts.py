"""Provider parts: counted and hashed with their message, kept through a strategy's rewrite of
a tool result, left out with a folded step, and refused clearly when malformed."""

from __future__ import annotations

import pytest

from contextfold.core.errors import MessageFormatError
from contextfold.core.history import History
from contextfold.core.messages import (
    AssistantMessage,
    Part,
    ToolCall,
    ToolMessage,
    UserMessage,
    from_openai,
    to_openai,
)
from contextfold.core.pipeline import prepare_view
from contextfold.core.tokens import ApproxCounter, count_message
from contextfold.core.view import Provenance, View
from contextfold.strategies.full import FullStrategy

IMAGE = Part.of("anthropic:layout", {"blocks": [{"type": "image"}]}, text="[image]", tokens=1600)
THINKING = Part.of("anthropic:layout", {"blocks": [{"type": "thinking"}]}, text="I think")


def test_parts_are_counted_and_hashed_with_their_message() -> None:
    counter = ApproxCounter()
    plain, pictured = ToolMessage("out", "c1"), ToolMessage("out", "c1", parts=(IMAGE,))
    assert count_message(counter, pictured) == count_message(counter, plain) + 1600 + 2
    history = History(counter=counter)
    history.append(AssistantMessage("a", tool_calls=(ToolCall("c1", "look"),)), plain)
    history.append(AssistantMessage("a", tool_calls=(ToolCall("c1", "look"),)), pictured)
    assert history[0].hashes[1] != history[1].hashes[1]
    assert not History().has_parts and history.has_parts


def test_to_openai_leaves_parts_out_only_when_asked() -> None:
    message = UserMessage("see", parts=(IMAGE,))
    assert from_openai(to_openai(message)) == message
    assert "contextfold_parts" not in to_openai(message, parts=False)


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        ("x", "contextfold_parts"),
        (["x"], "contextfold_parts[0]"),
        ([{"kind": "nokind", "data": "{}"}], "contextfold_parts[0].kind"),
        ([{"kind": "a:b", "data": 3}], "contextfold_parts[0].data"),
        ([{"kind": "a:b", "data": "{}", "tokens": -1}], "contextfold_parts[0].tokens"),
    ],
)
def test_malformed_parts_are_refused_naming_the_field(raw: object, where: str) -> None:
    with pytest.raises(MessageFormatError) as info:
        from_openai({"role": "user", "content": "x", "contextfold_parts": raw})
    assert info.value.at == where


class _Relabel:
    """Shows every tool result relabelled and folds the first step into a note."""

    name = "relabel"

    def observe(self, step: object, history: History) -> None:
        pass

    def render(self, history: History, budget: int | None) -> View:
        messages, provenance = [], []
        for step in history.steps:
            prov = Provenance((step.index,), "transformed")
            if step.index == 0:
                messages.append(AssistantMessage(f"[step 0 folded] {len(step.results)} result"))
                provenance.append(prov)
                continue
            messages.append(step.message)
            provenance.append(Provenance((step.index,)))
            for result in step.results:
                label = f"[step {step.index}]\n{result.content}"
                messages.append(ToolMessage(label, result.tool_call_id))
                provenance.append(prov)
        tokens = tuple(history.count(m) for m in messages)
        return View(tuple(messages), tokens, tuple(provenance), strategy=self.name)


def test_a_rewritten_result_keeps_its_parts_and_a_folded_step_leaves_them_out() -> None:
    history = History()
    history.append(
        AssistantMessage("look", tool_calls=(ToolCall("c0", "look"),), parts=(THINKING,)),
        ToolMessage("first", "c0", parts=(IMAGE,)),
    )
    history.append(UserMessage("again"))
    history.append(
        AssistantMessage("look", tool_calls=(ToolCall("c1", "look"),), parts=(THINKING,)),
        ToolMessage("second", "c1", parts=(IMAGE,)),
    )
    view = prepare_view(_Relabel(), history, None).view  # type: ignore[arg-type]
    folded, _, head, result = view.messages
    assert folded.parts == () and head.parts == (THINKING,)
    assert result == ToolMessage("[step 2]\nsecond", "c1", parts=(IMAGE,))
    assert view.tokens[3] == history.count(result)  # counted with the image


def test_a_verbatim_view_is_the_history_itself() -> None:
    history = History()
    history.append(UserMessage("", parts=(IMAGE,)))  # an image alone is a user message
    view = prepare_view(FullStrategy(), history, None).view
    assert view.messages[0] is history[0].message
    assert view.settled == 1


def test_views_rendered_call_after_call_each_carry_the_parts_of_their_own_results() -> None:
    """Carrying remembers what it carried (the same rewritten result, call after call), and a
    view that differs from the last one where it begins is carried anew."""
    history = History()
    for i in range(3):
        call = ToolCall(f"c{i}", "look")
        result = ToolMessage(f"result {i}", f"c{i}", parts=(IMAGE,))
        history.append(AssistantMessage("look", tool_calls=(call,)), result)
    strategy = _Relabel()
    first = prepare_view(strategy, history, None).view  # type: ignore[arg-type]
    again = prepare_view(strategy, history, None).view  # type: ignore[arg-type]
    assert again.messages == first.messages and again.tokens == first.tokens
    history.append(UserMessage("one more"))
    later = prepare_view(strategy, history, None).view  # type: ignore[arg-type]
    results = [m for m in later.messages if isinstance(m, ToolMessage)]
    assert [r.parts for r in results] == [(IMAGE,), (IMAGE,)]  # step 0 is folded
    assert later.tokens[-2] == history.count(results[-1])
    assert isinstance(later.messages[-1], UserMessage) and later.messages[-1].parts == ()
