"""Strategies that rewrite a view, so they can also run one after another in a chain.

A :class:`TransformStrategy` implements ``apply(view, history, budget) -> View``; its ``render``
applies it to the full history's view. :func:`rewrite` builds the new view from per-position
edits, recording an :class:`~contextfold.core.view.Elision` for every message it shrinks or
drops, so subclasses only decide *what* to change.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from contextfold.core.history import History, Step
from contextfold.core.messages import Message, ToolMessage
from contextfold.core.view import Elision, Provenance, RestorePath, View, ViewBuilder
from contextfold.strategies.full import FullStrategy

__all__ = ["Edit", "TransformStrategy", "observation_steps", "rewrite", "tool_stub"]


@dataclass(frozen=True, slots=True)
class Edit:
    """What to do with one view message: replace it (``message``) or drop it (None)."""

    message: Message | None
    reason: str
    restore: RestorePath | None
    """Restore path recorded in the elision; None when the content cannot be got back."""


class TransformStrategy:
    """Base for strategies that rewrite the full view (override :meth:`apply`)."""

    name = "transform"

    def __init__(self) -> None:
        self._full = FullStrategy()

    def observe(self, step: Step, history: History) -> None:
        """Most transforms keep no state between renders."""

    def render(self, history: History, budget: int | None) -> View:
        return self.apply(self._full.render(history, budget), history, budget)

    def apply(self, view: View, history: History, budget: int | None) -> View:
        raise NotImplementedError


def rewrite(view: View, edits: Mapping[int, Edit], history: History, *, strategy: str) -> View:
    """A copy of ``view`` with ``edits`` (by message position) applied and elisions recorded."""
    if not edits:
        return View(view.messages, view.tokens, view.provenance, view.elisions, strategy=strategy)
    out = ViewBuilder()
    out.elisions.extend(view.elisions)
    for pos, (msg, tokens, prov) in enumerate(
        zip(view.messages, view.tokens, view.provenance, strict=True)
    ):
        edit = edits.get(pos)
        if edit is None:
            out.add(msg, tokens, prov)
            continue
        kept = 0
        if edit.message is not None:
            kept = history.count(edit.message)
            out.add(edit.message, kept, Provenance(prov.steps, "transformed"))
        out.elide(Elision(prov.steps, edit.reason, max(tokens - kept, 0), edit.restore))
    return out.build(strategy)


def tool_stub(original: ToolMessage, text: str) -> ToolMessage:
    """A tool result standing in for ``original`` (same call id, so the view stays valid)."""
    return ToolMessage(text, original.tool_call_id, name=original.name)


def observation_steps(view: View) -> list[int]:
    """Distinct step indices that have tool results in ``view``, in order of appearance."""
    seen: dict[int, None] = {}
    for msg, prov in zip(view.messages, view.provenance, strict=True):
        if isinstance(msg, ToolMessage):
            for step in prov.steps:
                seen[step] = None
    return list(seen)
