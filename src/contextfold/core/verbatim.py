"""The "verbatim availability" rule: when does a view hold a value the next action needs?

A value is available when it occurs verbatim in a user message or a tool result of the view (the
agent cannot cite itself), as a whole token: the rule the sufficiency benchmark and the replay's
argument check both apply (:func:`found`, :func:`leaves`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from typing import Any, TypeAlias

from contextfold.core.messages import Message, ToolMessage, UserMessage

__all__ = ["Leaf", "available", "evidence", "found", "leaves", "pattern", "unescaped"]

Leaf: TypeAlias = str | int | float
"""A value the rule can look for."""


def leaves(value: Any) -> Iterator[Leaf]:
    """The informative leaf values of an argument value (dict values and list items,
    recursively); booleans, None and empty strings are left out.

    A list or dict is available when every leaf (list items, dict values, recursively; never the
    keys) is; booleans, None and empty strings carry no information and are always available.
    """
    if isinstance(value, dict):
        for item in value.values():
            yield from leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from leaves(item)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int | float) or (isinstance(value, str) and value.strip()):
        yield value


@lru_cache(maxsize=65536)
def pattern(value: Leaf) -> re.Pattern[str]:
    """The compiled regular expression that finds ``value`` verbatim (see the module doc)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        return re.compile(rf"(?<![\d.]){re.escape(str(value))}(?:\.0+)?(?!\.?\d)")
    if isinstance(value, float):
        text = repr(value)
        return re.compile(rf"(?<![\d.]){re.escape(text)}0*(?!\.?\d)")
    head = r"(?<![A-Za-z0-9])" if value[:1].isalnum() else ""
    tail = r"(?![A-Za-z0-9])" if value[-1:].isalnum() else ""
    return re.compile(head + re.escape(value) + tail, re.IGNORECASE)


def found(value: Leaf, text: str) -> bool:
    """Whether ``value`` occurs verbatim in ``text`` (JSON escapes in ``text`` undone too).

    - a **string** occurs case-insensitively as a whole token: a value that starts (ends) with a
      letter or digit must not be preceded (followed) by another, so ``"HAT170"`` is not found in
      ``"HAT1701"``, ``"ORD"`` not in ``"record"``, ``"8020"`` not in ``"18020"``, while ``"Mei"``
      is found in ``"mei_kovacs_8020"`` (an underscore, a quote or a space is a boundary); JSON
      escapes in the text are undone first when present, so an escaped apostrophe matches;
    - a **number** occurs as a numeric token: ``248`` matches ``248`` and ``248.0`` but not
      ``1248``, ``248.5`` or ``0.248``; ``41.64`` matches ``41.64`` and ``41.640``.
    """
    regex = pattern(value)
    if regex.search(text):
        return True
    return "\\" in text and regex.search(unescaped(text)) is not None


_ESCAPE = re.compile(r'\\(u[0-9a-fA-F]{4}|["\\/bfnrt])')
_SIMPLE = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def unescaped(text: str) -> str:
    """``text`` with JSON string escapes (``\\"``, ``\\n``, ``\\u00e9``) undone."""

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] == "u":
            return chr(int(code[1:], 16))
        return _SIMPLE.get(code, code)

    return _ESCAPE.sub(one, text)


def evidence(messages: Sequence[Message]) -> list[str]:
    """The texts of a view that count as evidence: its user messages and tool results."""
    return [m.content for m in messages if isinstance(m, UserMessage | ToolMessage)]


def available(value: Leaf, texts: Iterable[str]) -> bool:
    """Whether ``value`` occurs verbatim in any of ``texts``."""
    return any(found(value, t) for t in texts)
