"""The values a recorded tool call's arguments use: what argument availability checks.

One rule for every recorded call (:func:`call_values`), with the verbatim test of the
sufficiency oracle (:func:`contextfold.core.verbatim.found`: whole tokens,
case-insensitive, numbers as numeric tokens):

- **JSON arguments:** every leaf value (dict values and list items, recursively; never the keys).
  A string leaf with a blank in it (an expression such as ``"652.61 - 642.72"``, a note) also
  gives the values inside it (:func:`text_values`), since a call that computes with two prices
  uses both: its numbers, its tokens mixing digits and other characters (``#W9502127``), and
  the paths and identifiers a shell command would give.
- **Shell commands** (the ``command`` of a ``bash`` call, as mini-swe-agent's are imported; any
  tool in :data:`SHELL_TOOLS`): the tokens of the command that name something, split on blanks,
  quotes and shell punctuation:

  - *paths*: a token with a ``/`` or a dotted file extension (``src/app.py``, ``setup.cfg``),
    without a leading ``./`` or trailing punctuation;
  - *identifiers*: a token that only an agent who read it would write: with an underscore, a
    digit, an inner capital or a dot (``parse_args``, ``HttpClient``, ``os.path``), four
    characters or more. Plain words (``grep``, ``python``, ``test``) and flags (``-n``) are left
    out: any agent knows them without the context;
  - *numbers*: runs of three or more digits in the other tokens (the line range in
    ``sed -n '120,180p'``). A number of one or two digits alone (``head -n 40``,
    ``sed -n '12,40p'``) is left out: nearly every output of a coding session holds some such
    number, so finding one there proves nothing.

- **Trivial values are left out**, since finding them somewhere proves nothing: booleans, None,
  numbers with fewer than two significant digits (``0``, ``3``, ``0.5``), and strings shorter
  than three characters (a string of digits counts as a number).

Which of these values the agent *learned from the context* (held verbatim by an earlier user
message or tool result, and not by the system prompt) is decided by
:mod:`contextfold.bench.availability`; a value a shell command uses is also held by the
agent's own earlier shell commands that wrote it (:func:`shell_text`), which it can copy
from again without a restore.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

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

SHELL_TOOLS = frozenset({"bash", "shell", "execute_bash"})
"""Tools whose string arguments are shell commands."""

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
    try:
        arguments = call.parsed_arguments()
    except MessageFormatError:
        raw = call.arguments if shell_call(call) else ""
        return list(dict.fromkeys(shell_values(raw)))
    out: list[Leaf] = []
    for leaf in leaves(arguments):
        if isinstance(leaf, str) and shell_call(call):
            out.extend(shell_values(leaf))
            continue
        out.extend(_plain(leaf))
        if isinstance(leaf, str) and _BLANK.search(leaf.strip()):
            out.extend(text_values(leaf))
    return list(dict.fromkeys(out))


def shell_call(call: ToolCall) -> bool:
    """Whether ``call`` runs a shell command (its values follow :func:`shell_values`)."""
    return call.name in SHELL_TOOLS


def shell_text(message: AssistantMessage) -> str:
    """The arguments of ``message``'s shell calls, one a line ("" without any): where the
    agent's own earlier commands hold the values a later command uses."""
    return "\n".join(c.arguments for c in message.tool_calls if shell_call(c))


def shell_values(command: str) -> Iterator[Leaf]:
    """Paths, identifiers and numbers in a shell command (see the module doc)."""
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
    """The values inside a string argument with blanks (see the module doc)."""
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
    """Whether finding ``value`` in a text proves nothing (see the module doc)."""
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, str):
        return len(value.strip()) < 3
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    digits = str(abs(value)).replace(".", "").lstrip("0")
    return len(digits) < 2
