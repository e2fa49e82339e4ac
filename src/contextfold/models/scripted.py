"""A deterministic model for tests and scripted agents (it ships in the package; never a mock).

:class:`ScriptedModel` replays a list of replies in order, or asks a function for each reply, and
records every call it receives in :attr:`ScriptedModel.calls` so a test can compare what the
model was shown. Usage is counted with a :class:`~contextfold.core.tokens.TokenCounter`
(:class:`~contextfold.core.tokens.ApproxCounter` by default) over the messages only (tools are
not counted); ``cached_tokens`` is the token length of the run of leading messages that equal the
previous call's, the way a server's prefix cache would serve them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from contextfold.core.messages import Message, common_prefix, message_text
from contextfold.core.protocols import Completion, Usage
from contextfold.core.tokens import ApproxCounter, TokenCounter, count_messages
from contextfold.models._tools import ModelError, Reply, to_assistant

__all__ = ["ReplyFunction", "ScriptedCall", "ScriptedModel"]

ReplyFunction: TypeAlias = Callable[[Sequence[Message], Sequence[Mapping[str, Any]]], Reply]
"""Computes a reply from ``(messages, tools)``."""


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    """One call a :class:`ScriptedModel` received, and what it answered."""

    messages: tuple[Message, ...]
    tools: tuple[Mapping[str, Any], ...]
    max_tokens: int | None
    completion: Completion
    response_schema: Mapping[str, Any] | None = None


class ScriptedModel:
    """Replays scripted replies in order, or computes each with a function.

    Each reply is an :class:`~contextfold.core.messages.AssistantMessage`, a ``str`` (plain text)
    or an OpenAI-format assistant dict; a tool call's ``arguments`` string is kept verbatim, so a
    script can send malformed JSON (see :func:`contextfold.models.tool_call`). Running out of
    replies raises :class:`~contextfold.models.ModelError`. A reply function can read the
    JSON schema the current call asked for in :attr:`response_schema` (None when it asked for
    none).
    """

    def __init__(
        self,
        replies: Iterable[Reply] | ReplyFunction,
        *,
        name: str = "scripted",
        counter: TokenCounter | None = None,
    ) -> None:
        self.name = name
        self.calls: list[ScriptedCall] = []
        """Every call received, in order."""
        self._counter: TokenCounter = counter if counter is not None else ApproxCounter()
        self._function: ReplyFunction | None = None
        self._replies: list[Reply] = []
        if callable(replies):
            self._function = replies
        else:
            self._replies = list(replies)
        self._previous: tuple[Message, ...] = ()
        self.response_schema: Mapping[str, Any] | None = None
        """The ``response_schema`` of the call being answered."""

    @property
    def remaining(self) -> int | None:
        """Scripted replies not yet used (None when replies come from a function)."""
        return None if self._function is not None else len(self._replies) - len(self.calls)

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]] = (),
        *,
        max_tokens: int | None = None,
        response_schema: Mapping[str, Any] | None = None,
    ) -> Completion:
        """The next reply, with usage counted over ``messages``; the call is recorded."""
        position = len(self.calls)
        self.response_schema = response_schema
        message = to_assistant(self._next_reply(messages, tools, position), position=position)
        sent = tuple(messages)
        counts = count_messages(self._counter, sent)
        usage = Usage(
            prompt_tokens=sum(counts),
            cached_tokens=sum(counts[: common_prefix(self._previous, sent)]),
            completion_tokens=self._counter.count_batch([message_text(message)])[0],
        )
        completion = Completion(message, usage)
        call = ScriptedCall(sent, tuple(tools), max_tokens, completion, response_schema)
        self.calls.append(call)
        self._previous = sent
        return completion

    def _next_reply(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]], position: int
    ) -> Reply:
        if self._function is not None:
            return self._function(messages, tools)
        if position >= len(self._replies):
            raise ModelError(
                f"ScriptedModel {self.name!r} was scripted with {len(self._replies)} "
                f"replies and all were used; call #{position + 1} has none left"
            )
        return self._replies[position]
