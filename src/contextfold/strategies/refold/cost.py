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
dozens of calls and folds freely. How often a removed output is needed again is estimated
apart (:mod:`~contextfold.strategies.refold.reach`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from contextfold.core.meter import PriceTable

__all__ = ["CostRule"]

_TRUNCATED_MEAN = math.log(10)
"""Mean calls to come per call made, the longest tenth of futures truncated (module doc)."""


@dataclass(frozen=True, slots=True)
class CostRule:
    prices: PriceTable
    horizon: int | None = None
    """Calls expected at least after a change; None: estimated from the session."""

    def expected_calls(self, calls: int) -> int:
        """Calls expected to send the changed prompt, the present call (number ``calls``)
        included."""
        if self.horizon is None:
            return max(round(calls * _TRUNCATED_MEAN), 1)
        return max(calls + 1, self.horizon)

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
    ) -> bool:
        """Whether removing ``saving`` tokens from every prompt from now on is worth writing
        ``rewritten`` tokens to the cache again instead of reading them. Each later call needs
        what was removed with probability ``reach``: a restore call more (reading the
        ``prompt``, writing ``restored`` tokens back). ``once`` is the chance of one such
        restore over the change's whole life instead (not per call). ``folder`` is what making the
        change costs first: tokens sent, uncached, to the model that folds."""
        if saving <= 0:
            return False
        p = self.prices
        expected = self.expected_calls(calls)
        write = max(rewritten, 0) * (p.cache_write - p.cache_read) + folder * p.cache_write
        restores = (expected * reach + once) * (prompt * p.cache_read + restored * p.cache_write)
        kept = expected * saving * p.cache_read
        return write + restores < kept
