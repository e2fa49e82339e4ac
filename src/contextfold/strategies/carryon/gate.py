"""carryon's cost gate: ask the folder only when retiring the live tail could pay for it.

A fold costs the folder's calls and a prompt-cache rewrite before it saves anything, and a
refused fold saves nothing; ``gate=cost`` weighs both with refold's cost rule, ``gate=none``
asks whenever the trigger fires (the paper).
"""

from __future__ import annotations

from dataclasses import dataclass

from contextfold.core.experience import Experience
from contextfold.core.folds import FoldRecord
from contextfold.core.history import History
from contextfold.core.view import View
from contextfold.strategies.carryon.prompts import COMPILER, TRACKER
from contextfold.strategies.folding.folder import Folder
from contextfold.strategies.folding.steps import estimate_tokens
from contextfold.strategies.folding.view import first_user
from contextfold.strategies.refold.cost import CostRule
from contextfold.strategies.restore import calls_made, restore_calls

__all__ = ["Gate", "asked_folds"]

_REPLY = 256
"""Tokens each folder stage is expected to write at least (priced as output)."""


@dataclass(frozen=True, slots=True)
class Gate:
    """Decides, before the folder is asked, whether a fold could pay.

    It judges the best fold (the whole live tail retired, the new context message no longer than
    the old one) with refold's :class:`~contextfold.strategies.refold.cost.CostRule` (calls still
    to come estimated from the session, the chance of one restore afterwards from the restores so
    far), weighted by the chance that an asked fold commits: Laplace's rule over this session's
    asked folds, (commits + 1) / (asked + 2), or the rate of the workload's ended sessions when the
    strategy learns across sessions (:mod:`contextfold.core.experience`). A folder that keeps being
    refused is asked less. When a fold is not expected to pay, the folder is not asked and a record
    says so; a view over the budget is always folded.
    """

    rule: CostRule
    folder: Folder
    digest_tokens: int
    tracker_tokens: int
    compiler_tokens: int
    experience: Experience | None = None
    """Ended sessions of the workload (their commit rate is the prior), if learning."""

    def weigh(self, history: History, view: View, cut: int, end: int) -> dict[str, int | bool]:
        """The best fold's figures (tokens retired, cache rewritten, folder tokens) and
        whether it pays."""
        keep = {first_user(history), history.latest_user_index}
        retired = sum(history[i].total_tokens for i in range(cut, end) if i not in keep)
        rewritten = view.total_tokens - _prefix(view, first_user(history))
        asked = self.asked(history, cut, end)
        mine = asked_folds(history, view.strategy)
        commits = sum(r.accepted for r in mine)
        a, b = self.experience.commit_prior() if self.experience else (1.0, 2.0)
        chance = (commits + a) / (len(mine) + b)  # that an asked fold commits
        pays = self.rule.pays(
            rewritten=round(rewritten * chance),  # the cache is rewritten only on a commit
            saving=round(retired * chance),
            calls=calls_made(history),
            prompt=view.total_tokens - retired,
            restored=retired,
            once=chance * (restore_calls(history) + 1) / (commits + 2),
            folder=asked,
        )
        figures = {"retired": retired, "rewritten": rewritten, "folder": asked}
        return {"pays": pays, **figures, "commit_chance_pct": round(100 * chance)}

    def asked(self, history: History, cut: int, end: int) -> int:
        """Folder tokens the fold would cost, as cache-write tokens: the tracker and the
        compiler each sent the tail's digests (at most what fits beside their reply) and
        writing ``_REPLY`` tokens."""
        tail = sum(min(estimate_tokens(history[i]), self.digest_tokens) for i in range(cut, end))
        context = self.folder.context_tokens
        stages = (
            (TRACKER, min(self.tracker_tokens, context // 4)),
            (COMPILER, min(self.compiler_tokens, context // 3)),
        )  # the output limits the pipeline gives each stage
        sent = 0
        for instruction, limit in stages:
            room = max(self.folder.room(instruction, max_tokens=limit), 0)
            sent += context - limit - room + min(tail, room)  # instruction + what fits
        prices = self.rule.prices
        return sent + round(2 * _REPLY * prices.output / prices.cache_write)


def asked_folds(history: History, strategy: str) -> list[FoldRecord]:
    """The folds ``strategy`` asked the folder for (refusals at the gate made no call)."""
    return [r for r in history.folds if r.strategy == strategy and r.calls]


def _prefix(view: View, task: int | None) -> int:
    """Tokens of the view before the context message: the system prompt and the task."""
    total = 0
    for tokens, prov in zip(view.tokens, view.provenance, strict=True):
        if prov.steps and prov.steps != (task,):
            break
        total += tokens
    return total
