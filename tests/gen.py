"""Hypothesis generators of messages, steps and histories shared by the property tests."""

from __future__ import annotations

import json

from hypothesis import strategies as st

from contextfold.core.history import History
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    Part,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.core.tokens import ApproxCounter

text = st.text(st.characters(codec="utf-8"), max_size=40)
nonblank = text.filter(lambda s: bool(s.strip()))
names = st.from_regex(r"[a-z_]{1,12}", fullmatch=True)
json_args = st.dictionaries(names, st.integers() | names, max_size=3).map(json.dumps)


@st.composite
def tool_calls(draw: st.DrawFn, prefix: str = "c") -> tuple[ToolCall, ...]:
    n = draw(st.integers(0, 3))
    return tuple(ToolCall(f"{prefix}{i}", draw(names), draw(json_args)) for i in range(n))


@st.composite
def assistant_messages(draw: st.DrawFn, prefix: str = "c") -> AssistantMessage:
    calls = draw(tool_calls(prefix))
    content = draw(st.none() | text) if calls else draw(nonblank)
    return AssistantMessage(content, tool_calls=calls, reasoning=draw(st.none() | text))


provider_parts = st.lists(
    st.builds(
        Part,
        names.map(lambda n: f"anthropic:{n}"),
        json_args,
        text,
        st.integers(0, 2000),
    ),
    max_size=2,
).map(tuple)


def messages() -> st.SearchStrategy[Message]:
    return st.one_of(
        st.builds(SystemMessage, text, parts=provider_parts),
        st.builds(UserMessage, text, name=st.none() | names, parts=provider_parts),
        assistant_messages(),
        st.builds(AssistantMessage, text, parts=provider_parts),
        st.builds(ToolMessage, text, names, name=st.none() | names, parts=provider_parts),
    )


long_outputs = st.builds(
    lambda line, lines, start: "\n".join(f"{start + i}: {line}" for i in range(lines)),
    text,
    st.integers(40, 400),
    st.sampled_from([0, 0, 100, 1000]),
)
"""A tool output of 40 to 400 numbered lines (about 0.3k to 20k characters): long enough to
be cut, masked or deduplicated (outputs of the same line and start repeat each other)."""


@st.composite
def step_messages(draw: st.DrawFn, index: int, *, long: bool = False) -> tuple[Message, ...]:
    """One step's messages in a valid shape, with call ids unique to the step; with ``long``,
    a tool output may be :data:`long_outputs`."""
    if draw(st.booleans()):
        return (UserMessage(draw(nonblank)),)
    head = draw(assistant_messages(prefix=f"s{index}c"))
    output = (long_outputs | text) if long else text
    results = [ToolMessage(draw(output), c.id, name=c.name) for c in head.tool_calls]
    results = draw(st.permutations(results)) if results else []
    return (head, *results)


@st.composite
def histories(draw: st.DrawFn, max_steps: int = 30, *, long_outputs: bool = False) -> History:
    """A history of up to ``max_steps`` steps; ``long_outputs``: tool outputs may be long."""
    system = draw(st.none() | nonblank.map(SystemMessage))
    history = History(system, counter=ApproxCounter())
    for i in range(draw(st.integers(0, max_steps))):
        history.append(*draw(step_messages(i, long=long_outputs)))
    return history
