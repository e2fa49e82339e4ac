"""The rule of :mod:`contextfold.core.parts` applied to a view: a rewritten tool result keeps
the provider parts of the result it stands for.

A strategy builds its stubs, labels and cuts as new messages, which carry no parts; this puts
back the parts of the history's result that each such message answers for (the same call, in
the one step it renders), and counts it again. Histories without parts pay nothing.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from contextfold.core.messages import Message, ToolMessage

if TYPE_CHECKING:
    from contextfold.core.history import History
    from contextfold.core.view import Provenance, View

__all__ = ["carry_parts"]


def carry_parts(view: View, history: History) -> View:
    """``view`` with each rewritten tool result given its original's parts (see the module)."""
    if not history.has_parts:
        return view
    messages, tokens = list(view.messages), list(view.tokens)
    changed = False
    for i, (message, provenance) in enumerate(zip(view.messages, view.provenance, strict=True)):
        original = _original(message, provenance, history)
        if original is not None:
            messages[i] = carried = replace(message, parts=original.parts)
            tokens[i] = history.count(carried)
            changed = True
    if not changed:
        return view
    return replace(view, messages=tuple(messages), tokens=tuple(tokens))


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
