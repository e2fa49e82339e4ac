"""What a change of refold's settled prefix costs and saves, and the rent that weighs it.

Settling more steps (an advance) or applying pending changes to settled steps rewrites the cached
prompt from the first changed token on: made only when the reads saved over the calls expected
outweigh that write and the restores risked (:class:`~.cost.CostRule`). :func:`advance` and
:func:`pending` give the figures, :class:`Rent` weighs them. What the agent wrote itself
(:mod:`.own`) risks no restore; a note never makes the first advance on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from contextfold.core.view import Elision
from contextfold.strategies.refold.cost import NEVER, CostRule
from contextfold.strategies.refold.own import OWN
from contextfold.strategies.refold.policy import NOTE
from contextfold.strategies.refold.reach import Reach
from contextfold.strategies.refold.settled import Settled

__all__ = ["Change", "Rent", "advance", "pending"]


@dataclass(frozen=True, slots=True)
class Change:
    rewritten: int
    """Tokens of the prompt that become a cache write instead of a read."""
    saving: int
    """Tokens removed from every prompt from now on."""
    prompt: int
    """Tokens of the prompt after the change (what a restore call reads)."""
    pieces: list[int]
    """Tokens of each output the change removes (what the agent wrote carries no restore risk:
    :data:`~.own.OWN`)."""


def advance(
    old: Settled, cheap: Settled, *, stay: int, moved: int, new: int, first: bool
) -> Change:
    """Settling new steps (``cheap``: ``old`` extended, the steps it settled as they were).
    What follows the old boundary is written to the cache again, the steps new since the last
    call excepted (they are written either way). ``stay``, ``moved``, ``new``: the tokens shown
    after the old boundary now, after the new one, and new since the last call. The ``first``
    advance keeps what comes before the marker note, and its saving leaves out the notes': it
    is the session's big bet (the marker note added, the prompt written again from the first
    change on), which only outputs make; a note, saving a little at each call, rides along."""
    before, after = old.total + stay, cheap.total + moved
    shared = old.total + sum(cheap.step_tokens[: cheap.note_at]) if first else cheap.shared
    added = cheap.elisions[len(old.elisions) :]
    noted = sum(e.tokens for e in added if e.reason == NOTE) if first else 0
    return Change(after - shared - new, before - after - noted, after, _risked(added))


def pending(full: Settled, cheap: Settled, tail: int) -> Change:
    """Applying the pending changes to settled steps too (``full``, against ``cheap``): the
    stretch from the first changed step to the old boundary is written again. ``tail``: the
    tokens shown after ``full``'s boundary."""
    before = set(cheap.elisions)
    saving = cheap.total - full.total
    new = [e for e in full.elisions if e not in before]
    pieces = _risked(new) if new else [saving]
    return Change(cheap.shared - full.shared, saving, full.total + tail, pieces)


def _risked(elisions: Sequence[Elision]) -> list[int]:
    """The tokens of each removal a restore may have to bring back (the agent's own aside)."""
    return [e.tokens for e in elisions if e.reason not in OWN]


@dataclass(frozen=True, slots=True)
class Rent:
    """The rule refold advances by: the price table's cost rule and the session's reach-back
    rate (:class:`~.reach.Reach`)."""

    rule: CostRule
    reach: Reach
    unseen: int = 0
    """Tokens every prompt holds that the view does not show (a restore call reads them)."""

    def smallest_masked(self, prompt: int, maskable: int, *, system_led: bool = False) -> int:
        """The fewest tokens an output must have for masking it to pay for its own restore
        risk (:meth:`~.cost.CostRule.smallest_masked`); :data:`~.cost.NEVER` in a session
        that is ``system_led`` (when its first output left the window, the system prompt
        outweighed the rest of the prompt: what masking can save is a small share of a prompt
        each restore reads whole, and a bet put off until the outputs outweigh it would be
        made late, when the session may be ending)."""
        if system_led:
            return NEVER
        return self.rule.smallest_masked(prompt, self.reach.hazard(maskable))

    def pays(self, change: Change, *, calls: int, maskable: int) -> bool:
        """Whether ``change`` pays at call ``calls``: a later call needs any of the
        ``maskable`` older outputs alike (:meth:`~.reach.Reach.hazard`); a restore brings back
        one step."""
        n = len(change.pieces)
        return self.rule.pays(
            rewritten=change.rewritten,
            saving=change.saving,
            calls=calls,
            prompt=change.prompt + self.unseen,
            reach=self.reach.hazard(maskable, n) * n,
            restored=change.saving,
            pieces=change.pieces,
        )
