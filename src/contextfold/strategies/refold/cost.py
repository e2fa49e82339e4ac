"""refold's cost rule: does removing tokens from the prompt pay for rewriting the cache?

Under prefix caching a change inside the cached prefix makes every token after it a cache write;
a change is made only when the reads it saves over the calls still expected outweigh that write
and the restores it may cost (derivation: docs/strategies/refold.md).
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
"""Mean calls to come per call made: ``P(R > x) = t / (t + x)`` cut at its 90th percentile
(``9 t``) has mean ``t ln 10``."""


@dataclass(frozen=True, slots=True)
class CostRule:
    """Weighs a change of the cached prefix against the reads it saves.

    The calls still expected are estimated from the session (``t ln 10`` after ``t`` calls) or from
    the workload's ended sessions; :meth:`smallest_masked` says which outputs are too small for
    masking them to pay at all. How its parts were chosen: docs/decisions/refold.md.
    """

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
        the ``prompt``, writing the piece back, and that piece saving nothing from then on;
        docs/strategies/refold.md). ``pieces``: the tokens of each removed piece (none given:
        one piece of ``restored`` tokens). ``once`` is the chance of one restore of
        ``restored`` tokens over the change's whole life instead (not per call). ``folder`` is
        what making the change costs first: tokens sent, uncached, to the model that folds."""
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
        to stay masked ``1 / hazard`` calls per restore (docs/strategies/refold.md), so the
        calls to come do not matter; where a restore's write alone outweighs that saving,
        nothing pays."""
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
