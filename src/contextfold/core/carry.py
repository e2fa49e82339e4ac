"""The rule of :mod:`contextfold.core.parts` applied to a view: a rewritten tool result keeps
the provider parts of the result it stands for.

A strategy builds its stubs, labels and cuts as new messages, which carry no parts; this puts
back the parts of the history's result that each such message answers for (the same call, in
the one step it renders), and counts it again, once per message and history (a strategy shows
the same rewritten results call after call). Histories without parts pay nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from contextfold.core.messages import Message, ToolMessage

if TYPE_CHECKING:
    from contextfold.core.history import History
    from contextfold.core.view import Provenance, View

__all__ = ["carry_parts"]

_Carried = dict[tuple[Message, int], tuple[Message, int] | None]


@dataclass(slots=True)
class _Memo:
    """One history's carried results: each rewritten result (and the step it renders) with
    its carried copy and tokens (None: nothing to carry), and the last view's messages as
    given and as carried, so a view that begins like the last one is carried from there on."""

    carried: _Carried = field(default_factory=dict)
    given: tuple[Message, ...] = ()
    provenance: tuple[Provenance, ...] = ()
    messages: list[Message] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    first: int | None = None
    """The position of the first message carried, None when none was."""


_MEMOS: WeakKeyDictionary[History, _Memo] = WeakKeyDictionary()


def carry_parts(view: View, history: History) -> View:
    """``view`` with each rewritten tool result given its original's parts (see the module)."""
    if not history.has_parts:
        return view
    memo = _MEMOS.setdefault(history, _Memo())
    same = _same(view, memo)
    messages, tokens = memo.messages[:same], memo.tokens[:same]
    first = memo.first if memo.first is not None and memo.first < same else None
    for i in range(same, len(view.messages)):
        found = _carried(view.messages[i], view.provenance[i], history, memo.carried)
        messages.append(view.messages[i] if found is None else found[0])
        tokens.append(view.tokens[i] if found is None else found[1])
        first = i if first is None and found is not None else first
    memo.given, memo.provenance = view.messages, view.provenance
    memo.messages, memo.tokens, memo.first = messages, tokens, first
    if first is None:
        return view
    return replace(view, messages=tuple(messages), tokens=tuple(tokens))


def _same(view: View, memo: _Memo) -> int:
    """How many leading messages ``view`` shares, object for object, with the last view."""
    same = 0
    for new, old, at, was in zip(
        view.messages, memo.given, view.provenance, memo.provenance, strict=False
    ):
        if new is not old or at is not was:
            break
        same += 1
    return same


def _carried(
    message: Message, provenance: Provenance, history: History, carried: _Carried
) -> tuple[Message, int] | None:
    """``message`` given its original's parts, with its tokens; None when it keeps none."""
    if not isinstance(message, ToolMessage) or message.parts or len(provenance.steps) != 1:
        return None
    key = (message, provenance.steps[0])
    if key not in carried:
        original = _original(message, provenance, history)
        copy = None if original is None else replace(message, parts=original.parts)
        carried[key] = None if copy is None else (copy, history.count(copy))
    return carried[key]


def _original(message: Message, provenance: Provenance, history: History) -> ToolMessage | None:
    """The history's result ``message`` rewrites, when it has parts ``message`` lacks."""
    if not isinstance(message, ToolMessage) or message.parts or len(provenance.steps) != 1:
        return None
    index = provenance.steps[0]
    if not 0 <= index < len(history):
        return None
    for result in history[index].results:
        if result.tool_call_id == message.tool_call_id:
            return result if result.parts and result is not message else None
    return None
