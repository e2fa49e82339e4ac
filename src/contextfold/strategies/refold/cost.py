"""refold's cost rule: does removing tokens from the prompt pay for rewriting the cache?

Under prefix caching, a prompt that repeats the previous one's prefix reads it from the cache
(``cache_read`` per token); everything after the first changed message is written again
(``cache_write``). So a change that removes ``saving`` tokens from every later prompt, at the
price of making ``rewritten`` tokens a cache write instead of a read, pays when

    rewritten * (cache_write - cache_read) < calls * saving * cache_read

where ``calls`` is the number of calls still expected to send the smaller prompt, this one
included. A fixed horizon makes a short session pay for savings it never lives to collect
(a tau2 session makes about 8 to 12 calls). Unless ``horizon`` is set, the rule estimates the
calls still to come from the session itself, conservatively, as the calls made so far: by the
Copernican argument a session is as likely to end before as after twice its present length,
so in half the cases it lasts at least that long. A session on its third call thus expects
three, and only a saving of several times the rewrite is taken early; a long coding session
soon expects dozens of calls and folds freely.
"""

from __future__ import annotations

from dataclasses import dataclass

from contextfold.core.meter import PriceTable

__all__ = ["CostRule"]


@dataclass(frozen=True, slots=True)
class CostRule:
    prices: PriceTable
    horizon: int | None = None
    """Calls expected at least after a change; None: estimated from the session."""

    def expected_calls(self, calls: int) -> int:
        """Calls expected to send the changed prompt, the present call (number ``calls``)
        included."""
        if self.horizon is None:
            return max(calls, 1)
        return max(calls + 1, self.horizon)

    def pays(
        self,
        *,
        rewritten: int,
        saving: int,
        calls: int,
        prompt: int = 0,
        risk: float = 0.0,
        restored: int = 0,
    ) -> bool:
        """Whether removing ``saving`` tokens from every prompt from now on is worth writing
        ``rewritten`` tokens to the cache again instead of reading them. With probability
        ``risk`` the agent needs what was removed: a restore call more (reading the ``prompt``,
        writing ``restored`` tokens back), after which the saving is gone."""
        if saving <= 0:
            return False
        p = self.prices
        write = max(rewritten, 0) * (p.cache_write - p.cache_read)
        restore = risk * (prompt * p.cache_read + restored * p.cache_write)
        kept = self.expected_calls(calls) * saving * p.cache_read
        return write + restore < kept
