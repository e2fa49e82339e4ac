"""How a provider's prefix cache bills one prompt: the tokens it reads, writes and leaves as
plain input (:class:`CacheRule`), for each kind of provider (:func:`cache_rule`).

The meter has modelled vLLM's automatic prefix caching (:data:`VLLM`: whole blocks of 16 tokens);
a model a provider serves is billed by that provider's own rule: Anthropic caches exactly to a
breakpoint, never a prefix below the model's minimum, and its entries expire; OpenAI (and
Google) cache automatically from 1,024 tokens in steps of 128 and bill no writes.
"""

from __future__ import annotations

from dataclasses import dataclass

from contextfold.core.billing import BilledUsage, model_price

__all__ = [
    "ANTHROPIC_TTL",
    "ANTHROPIC_TTL_1H",
    "BLOCK_SIZE",
    "VLLM",
    "CacheRule",
    "cache_rule",
    "simulated_usage",
]

BLOCK_SIZE = 16
"""Prefix-cache block size in tokens (vLLM's default)."""

ANTHROPIC_TTL = 300.0
ANTHROPIC_TTL_1H = 3600.0
"""Seconds an Anthropic cache entry lives unused: 5 minutes, or an hour when written so."""


@dataclass(frozen=True, slots=True)
class CacheRule:
    """How one provider's prefix cache bills a prompt.

    A prompt's leading tokens found in the cache are read; the rest of it up to the point the
    cache stops at (a provider that caches to a breakpoint stops there: ``tail`` tokens after
    it) is written for the next call; what is left is plain input. Only whole ``block`` s past
    the ``minimum`` are cached.
    """

    name: str
    block: int = BLOCK_SIZE
    """Tokens are cached in whole blocks of this many (1: exactly to a breakpoint)."""
    minimum: int = 0
    """A prefix shorter than this is never cached."""
    writes: bool = True
    """Whether a write is billed apart; False: what is not read is plain input."""
    ttl: float | None = None
    """Seconds an entry lives unused; None: it never expires."""
    breakpoints: bool = False
    """Whether it caches only to the prompt's last breakpoint (the ``tail`` after it never)."""

    def cached(self, tokens: int) -> int:
        """The longest prefix of ``tokens`` tokens the cache holds: whole blocks past the
        minimum (0 below it)."""
        if tokens <= 0 or tokens < self.minimum:
            return 0
        return self.minimum + (tokens - self.minimum) // self.block * self.block

    def alive(self, gap: float | None) -> bool:
        """Whether an entry last used ``gap`` seconds ago is still there (unknown: yes)."""
        return gap is None or self.ttl is None or gap <= self.ttl

    def bill(
        self, prompt: int, output: int, *, read: int, tail: int = 0, hour: float = 0.0
    ) -> BilledUsage:
        """One call of ``prompt`` tokens that ``read`` of from the cache: the prompt up to
        ``tail`` tokens before its end written (a share ``hour`` of the writes for an hour),
        the rest plain input."""
        read = min(read, prompt)
        end = self.cached(max(prompt - (tail if self.breakpoints else 0), 0))
        written = max(end - read, 0) if self.writes else 0
        hours = round(written * hour)
        return BilledUsage(prompt - read - written, read, written - hours, hours, output)


VLLM = CacheRule("vllm")
"""vLLM's automatic prefix caching, priced as if writes were billed (today's meter)."""


def cache_rule(model: str | None, *, hour: bool = False) -> CacheRule:
    """The cache rule of ``model``'s provider (:data:`VLLM` for a model not known); ``hour``:
    its entries written for an hour (Anthropic)."""
    known = model_price(model)
    if known is None:
        return VLLM
    if known.table in ("gpt-5", "openai"):  # automatic caching, no write premium
        return CacheRule("automatic", block=128, minimum=1024, writes=False)
    ttl = ANTHROPIC_TTL_1H if hour else ANTHROPIC_TTL
    return CacheRule("breakpoint", block=1, minimum=known.cache_min, ttl=ttl, breakpoints=True)


def simulated_usage(
    prompt: int, shared: int, output: int, *, rule: CacheRule = VLLM
) -> BilledUsage:
    """One call as ``rule`` bills it when the ``shared`` leading tokens of its prompt were
    sent at the previous call (and are in the cache): those read, the rest written for the
    next call."""
    return rule.bill(prompt, output, read=rule.cached(min(shared, prompt)))
