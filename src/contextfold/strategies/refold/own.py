"""What the agent wrote itself, in a settled step: its thinking and its long tool inputs.

Neither is evidence a later call takes a value from (argument availability reads the agent's calls
only as shell commands), so leaving them out risks no restore; both come back verbatim with
``restore(step=N, part='thinking'|'calls')``. The steps after the boundary keep theirs: a provider
resends the thinking of the latest turn only (Anthropic requires the last assistant message's
thinking blocks while its tools run, and drops earlier turns' itself).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace

from contextfold.core.argvalues import shell_call
from contextfold.core.messages import AssistantMessage, Message, ToolCall
from contextfold.core.view import Elision, RestorePath
from contextfold.strategies.refold.policy import NOTE, settled_text, text_path

__all__ = ["INPUT", "OWN", "THINKING", "settle_agent", "short_inputs", "without_thinking"]

THINKING = "thinking"
"""The elision reason of a settled step's thinking (its reasoning and provider parts)."""

INPUT = "input"
"""The elision reason of a settled step's long tool inputs."""

OWN = frozenset({NOTE, THINKING, INPUT})
"""Elision reasons of what the agent wrote itself: the cost rule weighs no restore risk for
them (the values a later call uses come from tool outputs and user messages)."""


def without_thinking(message: AssistantMessage) -> AssistantMessage | None:
    """``message`` without its reasoning and provider parts (thinking blocks, reasoning items,
    their signatures), None when it has neither. A message with parts that carry nothing
    beyond its own text and calls (a client's block layout) keeps them."""
    carries = any(p.text or p.tokens for p in message.parts)
    if not message.reasoning and not carries:
        return None
    return replace(message, reasoning=None, parts=())


def short_inputs(step: int, message: AssistantMessage, limit: int) -> AssistantMessage | None:
    """``message`` with each argument of its calls longer than ``limit`` characters (a string,
    or a list or object as JSON) replaced by a line naming ``restore(step=N, part='calls')``;
    None when none is. A shell command stays whole: a later command may take a path from it."""
    calls = tuple(_short(step, call, limit) for call in message.tool_calls)
    if calls == message.tool_calls:
        return None
    return replace(message, tool_calls=calls)


def _short(step: int, call: ToolCall, limit: int) -> ToolCall:
    if len(call.arguments) <= limit or shell_call(call):  # no argument is longer than all
        return call
    try:
        arguments = json.loads(call.arguments)
    except (json.JSONDecodeError, RecursionError):
        return call
    if not isinstance(arguments, dict):
        return call
    changed = False
    for key, value in arguments.items():
        size = len(value) if isinstance(value, str) else len(json.dumps(value))
        if size > limit:
            arguments[key] = f"[{size:,} characters left out: {_calls_path(step)} shows them]"
            changed = True
    if not changed:
        return call
    return replace(call, arguments=json.dumps(arguments, ensure_ascii=False))


def settle_agent(
    step: int,
    message: AssistantMessage,
    tokens: int,
    *,
    thinking: bool,
    inputs: int,
    notes: bool,
    progress: str | None,
    count: Callable[[Message], int],
) -> tuple[AssistantMessage, int, list[Elision]]:
    """A settled agent message: without its thinking (``thinking``), its inputs longer than
    ``inputs`` characters left out (0: none), its text a note (``notes``, :mod:`.policy`);
    with its tokens and one elision for each that shortened it. The message is counted once
    without its thinking and long inputs, the tokens that saves shared between the two by the
    characters each left out."""
    elisions: list[Elision] = []
    plain = without_thinking(message) if thinking else None
    short = short_inputs(step, plain or message, inputs) if inputs else None
    if (shorter := short or plain) is not None and (kept := count(shorter)) < tokens:
        # a part may weigh tokens and no characters (an image): the thinking share is then 1
        dropped = max(_chars(message) - _chars(plain), 1) if plain is not None else 0
        cut = _chars(plain or message) - _chars(short) if short is not None else 0
        saved = tokens - kept
        ours = saved * dropped // (dropped + cut)
        for reason, share, made in ((THINKING, ours, plain), (INPUT, saved - ours, short)):
            if made is not None:
                elisions.append(Elision((step,), reason, share, _path(step, reason)))
        message, tokens = shorter, kept
    if notes and (noted := settled_text(step, message, tokens, progress=progress, count=count)):
        elisions.append(Elision((step,), NOTE, tokens - noted[1], text_path(step)))
        message, tokens = noted
    return message, tokens, elisions


def _chars(message: AssistantMessage | None) -> int:
    """What a message's thinking, parts and calls weigh, in characters."""
    if message is None:
        return 0
    parts = sum(len(p.text) for p in message.parts)
    calls = sum(len(c.arguments) for c in message.tool_calls)
    return len(message.reasoning or "") + parts + calls


def _path(step: int, reason: str) -> RestorePath:
    return _calls_path(step) if reason == INPUT else _thinking_path(step)


def _thinking_path(step: int) -> RestorePath:
    return RestorePath("restore", (("step", step), ("part", "thinking")))


def _calls_path(step: int) -> RestorePath:
    return RestorePath("restore", (("step", step), ("part", "calls")))
