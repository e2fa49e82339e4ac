"""The values a recorded tool call's arguments use: what argument availability checks.

:func:`call_values` gives, for JSON arguments, every leaf value (and the numbers, ids, paths
and identifiers inside a string leaf with a blank in it); for a shell command
(:data:`SHELL_TOOLS`), the tokens that name something: paths, identifiers only a reader would
write, numbers of three digits or more. Trivial values, which prove nothing when found, are
left out. One rule serves replay's argument availability, refold's reach-back count and the
sufficiency oracle, so they count the same values (docs/measure/measures.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from contextfold.core.errors import MessageFormatError
from contextfold.core.messages import AssistantMessage, ToolCall
from contextfold.core.verbatim import Leaf, leaves

__all__ = [
    "SHELL_TOOLS",
    "call_values",
    "shell_call",
    "shell_text",
    "shell_values",
    "text_values",
    "trivial",
]

SHELL_TOOLS = frozenset({"bash", "shell", "execute_bash", "run_shell_command"})
"""Tools whose string arguments are shell commands, by name in any case (Claude Code's is
``Bash``, Gemini CLI's ``run_shell_command``)."""

_TOKEN = re.compile(r"[^\s'\"`|;&<>(){}\[\],=$]+")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_EXTENSION = re.compile(r"[A-Za-z0-9_-]\.[A-Za-z][A-Za-z0-9]{0,4}$")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_DISTINCT = re.compile(r"_|\d|\.|[a-z][A-Z]")
_DIGITS = re.compile(r"\d{3,}")
_BLANK = re.compile(r"\s")


def call_values(call: ToolCall) -> list[Leaf]:
    """The non-trivial values ``call``'s arguments use, once each, in order of appearance.
    Arguments that are not valid JSON are read as one shell command when the tool is a shell,
    and give nothing otherwise."""
    return list(_call_values(call))


@lru_cache(maxsize=4096)
def _call_values(call: ToolCall) -> tuple[Leaf, ...]:
    """:func:`call_values`, kept for the calls of recent steps: refold's reach-back count, its
    cut and replay's argument check each read the same calls (an agent CLI's file bodies make
    this the costly part of taking in a step)."""
    try:
        arguments = call.parsed_arguments()
    except MessageFormatError:
        raw = call.arguments if shell_call(call) else ""
        return tuple(dict.fromkeys(shell_values(raw)))
    out: list[Leaf] = []
    for leaf in leaves(arguments):
        if isinstance(leaf, str) and shell_call(call):
            out.extend(shell_values(leaf))
            continue
        out.extend(_plain(leaf))
        if isinstance(leaf, str) and _BLANK.search(leaf.strip()):
            out.extend(text_values(leaf))
    return tuple(dict.fromkeys(out))


def shell_call(call: ToolCall) -> bool:
    """Whether ``call`` runs a shell command (its values follow :func:`shell_values`)."""
    return call.name.lower() in SHELL_TOOLS


def shell_text(message: AssistantMessage) -> str:
    """The arguments of ``message``'s shell calls, one a line ("" without any): where the
    agent's own earlier commands hold the values a later command uses."""
    return "\n".join(c.arguments for c in message.tool_calls if shell_call(c))


def shell_values(command: str) -> Iterator[Leaf]:
    """Paths, identifiers and numbers in a shell command (docs/measure/measures.md)."""
    for raw in _TOKEN.findall(command):
        if (raw.isalpha() and (raw.islower() or raw[1:].islower())) or raw[0] == "-":
            continue  # a plain word or a flag: the common case, decided first
        token = raw.removeprefix("./").rstrip(".:")
        if "/" in token or (_EXTENSION.search(token) and not _NUMBER.fullmatch(token)):
            if len(token) >= 3:
                yield token
        elif _IDENTIFIER.fullmatch(token) and len(token) >= 4 and _DISTINCT.search(token):
            yield token
        else:
            yield from (int(d) for d in _DIGITS.findall(token))


def text_values(text: str) -> Iterator[Leaf]:
    """The values inside a string argument with blanks (docs/measure/measures.md)."""
    for raw in _TOKEN.findall(text):
        token = raw.rstrip(".:")
        if _NUMBER.fullmatch(token):
            number = float(token) if "." in token else int(token)
            if not trivial(number):
                yield number
        elif len(token) >= 3 and any(ch.isdigit() for ch in token):
            yield token
        else:
            yield from shell_values(token)


def _plain(leaf: Leaf) -> Iterator[Leaf]:
    if isinstance(leaf, str) and _NUMBER.fullmatch(leaf.strip()):
        number = float(leaf) if "." in leaf else int(leaf)
        if not trivial(number):
            yield leaf.strip()
    elif not trivial(leaf):
        yield leaf.strip() if isinstance(leaf, str) else leaf


def trivial(value: Leaf | bool | None) -> bool:
    """Whether finding ``value`` in a text proves nothing (docs/measure/measures.md)."""
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, str):
        return len(value.strip()) < 3
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    digits = str(abs(value)).replace(".", "").lstrip("0")
    return len(digits) < 2
