"""A client's conversation as the proxy reads it: a system message, steps, and a hash chain.

A client resends its whole conversation with every call, so the proxy finds the stored session
it continues by hashing its steps as a chain (:class:`Conversation`): equal hashes, equal
prefixes, whatever the API the conversation came in.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from contextfold.core.errors import MessageFormatError
from contextfold.core.grouping import Grouped, Labeled, group_steps, parse_messages
from contextfold.core.messages import Message, SystemMessage, UserMessage, to_openai
from contextfold.serve.errors import ApiError

__all__ = ["Conversation", "Shown", "chain_hashes", "conversation_of", "parse_conversation"]

StepMessages = tuple[Message, ...]
Shown = Callable[[Message], Message]
"""A message as the client is shown it: without the strategy's marker lines
(:class:`Conversation`)."""


def _same(message: Message) -> Message:
    return message


@dataclass(frozen=True, slots=True)
class Conversation:
    """A parsed request conversation.

    A client resends its whole conversation with every call, in its API's shape; the API's edge
    reads it into messages, and :func:`conversation_of` groups them into the steps a
    :class:`~contextfold.core.history.History` holds (a user message; or an assistant message
    with the tool results answering its calls) and hashes the chain of those steps:
    ``chain[k]`` stands for the system message and the first ``k`` steps, seeded with the
    session family (a session header, or empty). Two conversations share ``chain[k]`` exactly
    when their first ``k`` steps (and system message, and family) are the same, so a stored
    session whose whole history hashes to ``chain[k]`` is a prefix of this conversation.
    Assistant messages are hashed as the client is shown them (``shown``: without the
    strategy's marker lines), so a client's copy of a reply matches the stored one, which keeps
    them.
    """

    system: SystemMessage | None
    steps: tuple[StepMessages, ...]
    chain: tuple[str, ...]
    """``chain[k]``: hash of the family, the system message and the first ``k`` steps."""


def parse_conversation(raw: Any, family: str, shown: Shown | None = None) -> Conversation:
    """Parse a Chat Completions request's ``messages``; raises a 400 :class:`ApiError`
    naming the message."""
    if not isinstance(raw, list) or not raw:
        raise ApiError(400, "'messages' must be a non-empty array", param="messages")
    try:
        labeled = parse_messages(raw, "messages")
    except MessageFormatError as exc:
        raise ApiError(400, str(exc), param=exc.at or "messages") from exc
    return conversation_of(labeled, family, shown=shown)


def conversation_of(
    labeled: Sequence[Labeled],
    family: str,
    *,
    system: SystemMessage | None = None,
    shown: Shown | None = None,
    field: str = "messages",
    system_field: str = "messages[0]",
) -> Conversation:
    """Group messages read from a request (labelled with their place in it) into steps and
    hash them; a 400 :class:`ApiError` naming the message for a conversation the history
    cannot hold (``system_field``: where a ``system`` given apart came from)."""
    apart = system_field if system is not None else "messages[0]"
    try:
        grouped = group_steps(labeled, system=system)
    except MessageFormatError as exc:
        raise ApiError(400, str(exc), param=exc.at or field) from exc
    system, steps = grouped.system, grouped.steps
    _check_texts(grouped, apart)
    if not steps:
        raise ApiError(400, f"'{field}' holds no user or assistant message", param=field)
    return Conversation(system, steps, tuple(chain_hashes(family, system, steps, shown)))


def _check_texts(grouped: Grouped, system_field: str) -> None:
    """A user or system message from a client must say something (a view never holds an
    empty one); an empty assistant turn is legal."""
    heads = [
        (m, labels[0])
        for m, labels in zip((s[0] for s in grouped.steps), grouped.labels, strict=True)
    ]
    if grouped.system is not None and not grouped.system.content.strip():
        problem = f"{system_field}: a system message needs text; this one has none"
        raise ApiError(400, problem, param=system_field)
    for message, label in heads:
        if isinstance(message, UserMessage) and not message.content.strip() and not message.parts:
            raise ApiError(
                400, f"{label}: a user message needs text; this one has none", param=label
            )


def chain_hashes(
    family: str,
    system: SystemMessage | None,
    steps: Sequence[StepMessages],
    shown: Shown | None = None,
) -> list[str]:
    """``len(steps) + 1`` hashes: of the prefix with no step, one step, ... all of them (each
    step's first message as ``shown`` makes it)."""
    shown = shown or _same
    digest = _hash(b"contextfold-session\0" + family.encode() + b"\0" + _canon((system,)))
    out = [digest]
    for step in steps:
        digest = _hash(digest.encode() + b"\0" + _canon((shown(step[0]), *step[1:])))
        out.append(digest)
    return out


def _hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _canon(messages: Sequence[Message | None]) -> bytes:
    dicts = [None if m is None else to_openai(m) for m in messages]
    return json.dumps(dicts, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass")
