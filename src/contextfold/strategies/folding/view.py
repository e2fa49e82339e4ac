"""The view every strategy that replaces the steps before a cut shares: system, the task,
one note standing for the folded steps, the latest user message, the steps since the cut.

The task (the first user message) and the latest user message are never folded away: they
stay verbatim. Every folded step is an elision with ``restore(step=N)``; the tokens the note
saves are shared among them in proportion to their size.
"""

from __future__ import annotations

from collections.abc import Sequence

from contextfold.core.history import History
from contextfold.core.messages import UserMessage
from contextfold.core.view import Elision, Provenance, RestorePath, View, ViewBuilder

__all__ = ["elide_covered", "first_user", "folded_view"]


def first_user(history: History) -> int | None:
    """Index of the first user step (the task), or None."""
    return next((s.index for s in history.steps if s.kind == "user"), None)


def folded_view(
    history: History, cut: int, note: UserMessage | None, *, reason: str, strategy: str
) -> View:
    """The view with the steps before ``cut`` replaced by ``note`` (none when ``cut`` is 0)."""
    out = ViewBuilder()
    out.add_system(history)
    if cut == 0 or note is None:
        for step in history.steps:
            out.add_step(step)
        return out.build(strategy)
    task, latest = first_user(history), history.latest_user_index
    pinned = {i for i in (task, latest) if i is not None and i < cut}
    if task in pinned:
        out.add_step(history[task])
    covered = [i for i in range(cut) if i not in pinned]
    tokens = history.count(note)
    out.add(note, tokens, Provenance(tuple(covered), "transformed"))
    if latest in pinned and latest != task:
        out.add_step(history[latest])
    for step in history.steps[cut:]:
        out.add_step(step)
    elide_covered(out, history, covered, tokens, reason)
    return out.build(strategy)


def elide_covered(
    out: ViewBuilder, history: History, covered: Sequence[int], note: int, reason: str
) -> None:
    """One elision per covered step (``restore(step=N)``); the tokens the ``note`` tokens
    stand in for shared among them in proportion to their size."""
    total = sum(history[i].total_tokens for i in covered)
    left = removed = max(total - note, 0)
    for k, index in enumerate(covered):
        share = history[index].total_tokens * removed // total if total else 0
        tokens = left if k == len(covered) - 1 else min(share, left)
        left -= tokens
        out.elide(Elision((index,), reason, tokens, RestorePath.step(index)))
