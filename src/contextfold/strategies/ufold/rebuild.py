"""Whether rebuilding the context at a user message pays: ufold's never-worse rule.

A rebuild rewrites everything after the system prompt that the server had cached; it is adopted
only when the tokens it removes from later prompts outweigh that write, so a rebuild that does
not pay leaves the cached prefix hitting.
"""

from __future__ import annotations

from contextfold.core.history import History
from contextfold.core.messages import common_prefix
from contextfold.core.view import View
from contextfold.strategies.refold.cost import CostRule
from contextfold.strategies.restore import calls_made, restore_calls

__all__ = ["weigh", "worth_asking"]


def weigh(
    old: View,
    new: View,
    history: History,
    user: int,
    *,
    rule: CostRule,
    budget: int | None,
    adopted: int,
) -> dict[str, int | bool]:
    """The figures of a rebuild from ``old`` to ``new`` at user message ``user``, and
    whether it is adopted.

    By refold's :class:`~contextfold.strategies.refold.cost.CostRule`: the calls still expected
    estimated from the session, the chance of a restore by Laplace's rule (restores so far per
    rebuild adopted). A rebuild is always adopted when the view without it is over the budget. One
    that does not pay is kept in the fold log with ``adopted: false`` (and its figures), and the
    view stays the previous one plus what came since.
    """
    shared = common_prefix(old.messages, new.messages)
    cached = sum(
        tokens
        for tokens, prov in zip(old.tokens[shared:], old.provenance[shared:], strict=True)
        if all(step < user for step in prov.steps)  # the user message itself is new anyway
    )
    saving = old.total_tokens - new.total_tokens
    forced = budget is not None and old.total_tokens > budget
    pays = rule.pays(
        rewritten=cached,
        saving=saving,
        calls=calls_made(history),
        prompt=new.total_tokens,
        restored=saving,
        once=(restore_calls(history) + 1) / (adopted + 2),  # chance of one restore after it
    )
    return {"adopted": forced or pays, "saving": saving, "rewritten": cached, "forced": forced}


def worth_asking(
    old: View,
    history: History,
    user: int,
    *,
    rule: CostRule,
    budget: int | None,
    adopted: int,
    asked: int,
) -> bool:
    """Whether a folder should be asked at all: whether even the best rebuild (the system
    prompt and the current turn, nothing else) pays for rewriting the cache and for the
    ``asked`` tokens the folder calls would be sent. When it cannot, no call is made."""
    if budget is not None and old.total_tokens > budget:
        return True
    steps = [prov.steps for prov in old.provenance]
    older = sum(t for t, s in zip(old.tokens, steps, strict=True) if s and max(s) < user)
    return rule.pays(
        rewritten=older,
        folder=asked,
        saving=older,
        calls=calls_made(history),
        prompt=old.total_tokens - older,
        restored=older,
        once=(restore_calls(history) + 1) / (adopted + 2),
    )
