"""A request fitted to the embedded model's window (``--upstream local``): agent CLIs send more
than a 135M model reads in reasonable time (Claude Code's tools alone are ~8,500 of its tokens),
so :func:`fit_window` leaves out the tools, then the oldest messages after the system prompt,
then cuts long messages to an even share (head and tail kept), until the prompt fits. Each
reduction is named for the log; the proxy's history keeps the request whole."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextfold.core.errors import ModelError
from contextfold.core.messages import AssistantMessage, Message, SystemMessage
from contextfold.core.protocols import WindowedModel
from contextfold.models._tools import render_json_reply

__all__ = ["FLOOR", "Fitted", "fit_window"]

FLOOR = 96
"""Tokens a cut message keeps at least; below that, older messages are left out instead."""
CUT = "\n[... {n:,} tokens left out here to fit the embedded model's window ...]\n"
_TRIES = 6


@dataclass(frozen=True, slots=True)
class Fitted:
    """What the model is sent, and how it was reduced."""

    messages: list[Message]
    tools: Sequence[Mapping[str, Any]]
    prompt_tokens: int
    """The prompt's tokens as sent."""
    reductions: dict[str, str] = field(default_factory=dict)
    """Each kind of reduction made (``tools``, ``messages``, ``cut``) -> what it was."""


def fit_window(
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]],
    model: WindowedModel,
    window: int,
) -> Fitted:
    """``messages`` and ``tools`` reduced (see the module) to a prompt of at most ``window``
    tokens; a :class:`ModelError` when even the reduced prompt does not fit."""
    whole = model.prompt_tokens(messages, tools)
    if whole <= window:
        return Fitted(list(messages), tools, whole)
    said: dict[str, str] = {}
    if tools:
        bare = model.prompt_tokens(messages)
        said["tools"] = f"its {len(tools)} tools ({whole - bare:,} tokens) were not sent"
        if bare <= window:
            return Fitted(list(messages), (), bare, said)
        whole = bare
    sizes = [model.text_tokens(_text(m)) for m in messages]
    budget = window - (whole - sum(sizes))  # what the template's own markers leave
    for _ in range(_TRIES):
        kept, cut = _shortened(list(messages), sizes, budget)
        tokens = model.prompt_tokens(kept)
        if tokens <= window:
            return Fitted(kept, (), tokens, said | _said(len(messages), kept, cut))
        budget -= tokens - window + 8  # a cut text counts a little more than its share
    raise ModelError(
        f"the request does not fit the embedded model's window of {window:,} tokens "
        f"even reduced ({tokens:,} tokens)"
    )


def _shortened(messages: list[Message], sizes: list[int], budget: int) -> tuple[list[Message], int]:
    """The messages kept (cut to one share where longer) and how many were cut."""
    keep = list(range(len(messages)))
    first = 1 if isinstance(messages[0], SystemMessage) else 0
    while len(keep) - first > 1 and _share([sizes[i] for i in keep], budget) < FLOOR:
        keep.pop(first)  # the oldest message after the system prompt
    share = max(_share([sizes[i] for i in keep], budget), 1)
    kept = [messages[i] if sizes[i] <= share else _cut(messages[i], sizes[i], share) for i in keep]
    return kept, sum(1 for i in keep if sizes[i] > share)


def _share(sizes: list[int], budget: int) -> int:
    """The largest ``c`` with ``sum(min(size, c)) <= budget``: messages up to ``c`` tokens
    stay whole, longer ones are cut to it."""
    rest, left = budget, len(sizes)
    for size in sorted(sizes):
        if size * left > rest:
            return rest // left
        rest -= size
        left -= 1
    return max(sizes, default=budget)


def _cut(message: Message, size: int, share: int) -> Message:
    """``message`` with its text cut to about ``share`` tokens: head and tail kept."""
    text = _text(message)
    keep = max(share - 24, 8) / size  # the line that says so takes ~24 tokens
    half = int(len(text) * keep / 2)
    gone = size - int(size * keep)
    cut = text[:half] + CUT.format(n=gone) + text[len(text) - half :]
    if isinstance(message, AssistantMessage):
        return AssistantMessage(cut)  # a tool call's JSON, as the model would read it
    return dataclasses.replace(message, content=cut)


def _text(message: Message) -> str:
    """The text the model reads of ``message`` (a tool call as its JSON)."""
    if isinstance(message, AssistantMessage):
        return render_json_reply(message) if message.tool_calls else message.content or ""
    return message.content


def _said(before: int, kept: list[Message], cut: int) -> dict[str, str]:
    said = {}
    if len(kept) < before:
        said["messages"] = f"{before - len(kept)} of its {before} messages were left out"
    if cut:
        said["cut"] = f"{cut} long message{'s' * (cut > 1)} cut to fit"
    return said
