from __future__ import annotations

from collections.abc import Sequence

import pytest

from contextfold.core.errors import HistoryError
from contextfold.core.history import History, make_step
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.core.tokens import MESSAGE_OVERHEAD, ApproxCounter

CALL = ToolCall("c1", "read", '{"path": "a.py"}')


class CountingCounter(ApproxCounter):
    """The approximation, recording every text it was asked to count."""

    name = "counting"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        self.seen.extend(texts)
        return super().count_batch(texts)


@pytest.mark.parametrize(
    ("messages", "needle"),
    [
        ((), "no messages"),
        ((SystemMessage("s"),), "starts with a system message"),
        ((UserMessage("a"), UserMessage("b")), "exactly one message"),
        ((AssistantMessage(None, tool_calls=(CALL,)),), "do not answer"),
        ((AssistantMessage("x"), ToolMessage("r", "c9")), "do not answer"),
        ((AssistantMessage(None, tool_calls=(CALL,)), UserMessage("u")), "only tool results"),
        ((AssistantMessage(None, tool_calls=(CALL, CALL)),), "repeats a tool call id"),
    ],
)
def test_bad_steps_are_refused_and_nothing_is_appended(
    messages: tuple[Message, ...], needle: str
) -> None:
    history = History()
    history.append(UserMessage("first"))
    with pytest.raises(HistoryError, match=needle):
        history.append(*messages)
    assert len(history) == 1


def test_steps_have_stable_indices_counts_and_hashes() -> None:
    counter = CountingCounter()
    history = History(SystemMessage("system prompt"), counter=counter)
    a = history.append(UserMessage("read a.py"))
    b = history.append(AssistantMessage(None, tool_calls=(CALL,)), ToolMessage("x = 1\n", "c1"))
    c = history.append(
        AssistantMessage("again", tool_calls=(ToolCall("c2", "read", "{}"),)),
        ToolMessage("x = 1\n", "c2"),
    )
    assert [s.index for s in history] == [0, 1, 2]
    assert (a.kind, b.kind) == ("user", "assistant")
    assert b.results == (ToolMessage("x = 1\n", "c1"),)
    assert b.hashes[1] == c.hashes[1] != b.hashes[0]  # same content, same hash
    assert a.tokens == ((len("read a.py") + 3) // 4 + MESSAGE_OVERHEAD,)
    # each message was counted exactly once, when its step was made
    assert len(counter.seen) == 1 + 1 + 2 + 2
    history.messages()
    [s.total_tokens for s in history]
    assert len(counter.seen) == 6


def test_results_may_come_in_any_order_and_latest_user_is_tracked() -> None:
    history = History()
    assert history.latest_user_index is None
    calls = (ToolCall("a", "f", "{}"), ToolCall("b", "g", "{}"))
    history.append(UserMessage("go"))
    history.append(
        AssistantMessage(None, tool_calls=calls), ToolMessage("2", "b"), ToolMessage("1", "a")
    )
    assert history.latest_user_index == 0


def test_append_step_checks_the_index() -> None:
    history = History()
    step = make_step(3, (UserMessage("x"),), ApproxCounter())
    with pytest.raises(HistoryError, match="step index 3 appended at position 0"):
        history.append_step(step)
