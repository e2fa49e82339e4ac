"""refold's cost rule: does removing tokens from the prompt pay for rewriting the cache?

Under prefix caching, a prompt that repeats the previous one's prefix reads it from the cache
(``cache_read`` per token); everything after the first changed message is written again
(``cache_write``). So a change that removes ``saving`` tokens from every later prompt, at the
price of making ``rewritten`` tokens a cache write instead of a read, pays when

    rewritten * (cache_write - cache_read) < calls * saving * cache_read

where ``calls`` is the number of calls still expected to send the smaller prompt, this one
included. A fixed horizon makes a short session pay for savings it never lives to collect
(a tau2 session makes about 8 to 12 calls). Unless ``horizon`` is set, the rule estimates the
calls still to come from the session itself. By the Copernican argument, a session seen at a
moment uniformly distributed over its life, ``t`` calls in, has ``R`` calls to come with
``P(R > x) = t / (t + x)``: the median is ``t``, the mean unbounded. The rule takes the mean of
``R`` truncated at its 90th percentile, ``9 t`` (the longest tenth of futures counts as only
``9 t``): ``t ln 10``, about ``2.3 t``. A session on its third call thus expects seven, and only
a saving of several times the rewrite is taken early; a long coding session soon expects
dozens of calls and folds freely. With an :class:`~contextfold.core.experience.Experience`
(sessions of the same workload that ended before), the estimate is that of the ended sessions
as long as this one, with one more that ends at this call: the rule then bets only on calls the
workload has shown, so a workload's first session, and a session longer than any that ended,
make only the changes that pay at once. (Counting the Copernican estimate as that one more
session, as before, left the recorded tau2-sierra files, each learned alone, at up to 1.005 of
full's cost: a few ended sessions could not outweigh its long tail. Without it every file is at
or below full; the coding runs then keep 0.675 of full's tokens instead of 0.635, at the same
cost as with no experience.) How often a removed output is needed again is estimated apart
(:mod:`~contextfold.strategies.refold.reach`).

A restore answers with the removed piece at the end of the prompt, where it stays: from then
on that piece saves nothing. A change removes ``n`` pieces (one per step), the ``i``-th of
``s_i`` tokens; a later call reaches back into them with chance ``reach``, into each with
chance ``h = reach / n``. A piece still saves at the ``k``-th call to come with chance
``(1 - h)^k``, so over ``E`` calls

    kept     = saving * cache_read * (1 - (1 - h)^E) / h        (E * saving * cache_read at 0)
    restores = sum_i (1 - (1 - h)^E) * (prompt * cache_read + s_i * cache_write)

Counting the saving of every call as if no restore ever came would take the bet too often
where the agent reaches back often and the session is short. (Weighing the chance by the
pieces' sizes instead, as if a larger output were needed more often, raised the coding runs'
replayed tokens from 0.63 to 0.65 of full's and did little for the conversations.)

The same sums, for one piece alone, say which outputs are worth masking at all: the expected
calls it stays masked per expected restore are ``1 / h`` whatever ``E`` is, so masking an
output of ``s`` tokens pays when

    s * cache_read / h > prompt * cache_read + s * cache_write

(:meth:`CostRule.smallest_masked`; never where ``h >= cache_read / cache_write``, 0.08 under
the default table: a restore's write alone outweighs the saving). refold keeps the smaller
outputs in full when it settles them (an airline session had masked a 172-token reservation
record beside two 2,184-token flight searches, and restored it two calls later).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from contextfold.core.experience import Experience
from contextfold.core.meter import PriceTable

__all__ = ["NEVER", "CostRule"]

NEVER = 1 << 62
""":meth:`CostRule.smallest_masked` where masking no output pays."""

_TRUNCATED_MEAN = math.log(10)
"""Mean calls to come per call made, the longest tenth of futures truncated (module doc)."""


@dataclass(frozen=True, slots=True)
class CostRule:
    prices: PriceTable
    horizon: int | None = None
    """Calls expected at least after a change; None: estimated from the session."""
    experience: Experience | None = None
    """Ended sessions of the workload, when the strategy learns across sessions."""

    def expected_calls(self, calls: int) -> int:
        """Calls expected to send the changed prompt, the present call (number ``calls``)
        included."""
        if self.horizon is not None:
            return max(calls + 1, self.horizon)
        if self.experience is not None:  # evidence only (one more session, ending now)
            return max(round(self.experience.calls_to_come(calls)), 1)
        return max(round(calls * _TRUNCATED_MEAN), 1)

    def pays(
        self,
        *,
        rewritten: int,
        saving: int,
        calls: int,
        prompt: int = 0,
        reach: float = 0.0,
        restored: int = 0,
        once: float = 0.0,
        folder: int = 0,
        pieces: Sequence[int] = (),
    ) -> bool:
        """Whether removing ``saving`` tokens from every prompt from now on is worth writing
        ``rewritten`` tokens to the cache again instead of reading them. Each later call needs
        something of what was removed with probability ``reach``: a restore call more (reading
        the ``prompt``, writing the piece back, and that piece saving nothing from then on:
        module doc). ``pieces``: the tokens of each removed piece (none given: one piece of
        ``restored`` tokens). ``once`` is the chance of one restore of ``restored`` tokens over
        the change's whole life instead (not per call). ``folder`` is what making the change
        costs first: tokens sent, uncached, to the model that folds."""
        if saving <= 0:
            return False
        p = self.prices
        expected = self.expected_calls(calls)
        write = max(rewritten, 0) * (p.cache_write - p.cache_read) + folder * p.cache_write
        sizes = [max(s, 0) for s in pieces] or [max(restored, 0)]
        live, needed = _survival(expected, min(max(reach, 0.0) / len(sizes), 1.0))
        read = prompt * p.cache_read
        restores = sum(needed * (read + size * p.cache_write) for size in sizes)
        restores += once * (read + restored * p.cache_write)
        return write + restores < live * saving * p.cache_read

    def smallest_masked(self, prompt: int, hazard: float) -> int:
        """The fewest tokens an output must have for masking it to pay on its own: it saves
        its tokens at every call until a restore (chance ``hazard`` per call) reads the
        ``prompt`` and writes it to the cache again. Over any number of calls it is expected
        to stay masked ``1 / hazard`` calls per restore (module doc), so the calls to come do
        not matter; where a restore's write alone outweighs that saving, nothing pays."""
        if hazard <= 0.0:
            return 0
        p = self.prices
        margin = p.cache_read / hazard - p.cache_write
        return math.ceil(prompt * p.cache_read / margin) if margin > 0.0 else NEVER


def _survival(calls: int, hazard: float) -> tuple[float, float]:
    """Over ``calls`` calls, each needing a removed piece with chance ``hazard``: the calls
    it is expected to stay removed for, and the chance it is needed at all."""
    if hazard <= 0.0:
        return float(calls), 0.0
    needed = 1.0 - (1.0 - hazard) ** calls
    return needed / hazard, needed
