"""A client's conversation as the proxy reads it: a system message, steps, and a hash chain.

A client resends its whole conversation with every call. The proxy groups it into the steps a
:class:`~contextfold.core.history.History` holds (a user message; or an assistant message with
the tool results answering its calls) and hashes the chain of those steps: ``chain[k]`` stands
for the system message and the first ``k`` steps, seeded with the session family (the
``X-Contextfold-Session`` header, or empty). Two conversations share ``chain[k]`` exactly when
their first ``k`` steps (and system message, and family) are the same, so a stored session
whose whole history hashes to ``chain[k]`` is a prefix of this conversation.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from contextfold.core.errors import HistoryError, MessageFormatError
from contextfold.core.history import check_step_shape
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
    from_openai,
    to_openai,
)
from contextfold.serve.errors import ApiError

__all__ = ["Conversation", "chain_hashes", "parse_conversation"]

StepMessages = tuple[Message, ...]


@dataclass(frozen=True, slots=True)
class Conversation:
    """A parsed request conversation."""

    system: SystemMessage | None
    steps: tuple[StepMessages, ...]
    chain: tuple[str, ...]
    """``chain[k]``: hash of the family, the system message and the first ``k`` steps."""


def parse_conversation(raw: Any, family: str) -> Conversation:
    """Parse a request's ``messages``; raises a 400 :class:`ApiError` naming the message."""
    if not isinstance(raw, list) or not raw:
        raise ApiError(400, "'messages' must be a non-empty array", param="messages")
    messages = [_parse(m, i) for i, m in enumerate(raw)]
    system = messages[0] if isinstance(messages[0], SystemMessage) else None
    steps = _group(messages, 1 if system else 0)
    if not steps:
        raise ApiError(400, "'messages' holds no user or assistant message", param="messages")
    return Conversation(system, steps, tuple(chain_hashes(family, system, steps)))


def chain_hashes(
    family: str, system: SystemMessage | None, steps: Sequence[StepMessages]
) -> list[str]:
    """``len(steps) + 1`` hashes: of the prefix with no step, one step, ... all of them."""
    digest = _hash(b"contextfold-session\0" + family.encode() + b"\0" + _canon((system,)))
    out = [digest]
    for step in steps:
        digest = _hash(digest.encode() + b"\0" + _canon(step))
        out.append(digest)
    return out


def _hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _canon(messages: Sequence[Message | None]) -> bytes:
    dicts = [None if m is None else to_openai(m) for m in messages]
    return json.dumps(dicts, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _parse(raw: Any, position: int) -> Message:
    calls = raw.get("tool_calls") if isinstance(raw, dict) else None
    if calls is not None and not isinstance(calls, list):
        problem = f"'tool_calls' must be an array, got {type(calls).__name__}"
        raise _bad(position, problem, field=".tool_calls")
    try:
        message = from_openai(raw)
    except MessageFormatError as exc:
        raise _bad(position, str(exc)) from exc
    if isinstance(message, UserMessage | SystemMessage) and not message.content.strip():
        raise _bad(position, f"a {message.role} message needs text; this one has none")
    return message


def _group(messages: list[Message], start: int) -> tuple[StepMessages, ...]:
    steps: list[StepMessages] = []
    i = start
    while i < len(messages):
        head = messages[i]
        if isinstance(head, SystemMessage):
            raise _bad(i, "a system message may only come first")
        if isinstance(head, ToolMessage):
            raise _bad(i, "a tool message must follow the assistant message whose call it answers")
        j = i + 1
        if isinstance(head, AssistantMessage):
            while j < len(messages) and isinstance(messages[j], ToolMessage):
                j += 1
        step = tuple(messages[i:j])
        try:
            check_step_shape(len(steps), step)
        except HistoryError as exc:
            raise _bad(i, str(exc).replace(f"step {len(steps)}", "this message", 1)) from exc
        assert isinstance(head, UserMessage | AssistantMessage)
        steps.append(step)
        i = j
    return tuple(steps)


def _bad(position: int, problem: str, *, field: str = "") -> ApiError:
    name = f"messages[{position}]{field}"
    return ApiError(400, f"{name}: {problem}", param=name)
