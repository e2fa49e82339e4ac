"""Price tables: what a prompt's cache reads and writes, its uncached input and its output cost,
per million tokens (:data:`PRICE_TABLES`; a model's own prices: :mod:`~contextfold.core.billing`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["COST_KEYS", "PRICE_TABLES", "PriceTable"]

COST_KEYS = ("cost_output_usd", "cost_read_usd", "cost_write_usd", "cost_input_usd")
"""The agent's cost split by what it pays for: the completions, cache reads, cache writes and
uncached input (they add up to ``cost_usd``). A context strategy moves the prompt's three
parts; none moves the output."""


@dataclass(frozen=True, slots=True)
class PriceTable:
    """USD per million tokens."""

    name: str
    input: float
    cache_read: float
    cache_write: float
    """A cache write with the table's lifetime (Anthropic's 5 minutes under ``default``)."""
    output: float
    cache_write_1h: float = 10.0
    """A cache write with Anthropic's 1-hour lifetime (2x the input price), which a bill may
    hold beside the table's own writes."""


def _table(name: str, *, read: float, write: float) -> PriceTable:
    """Uncached input $5/M and output $25/M (the nominal prices CarryOn used), cache reads and
    writes at ``read`` and ``write`` times the input price (1-hour writes at 2x)."""
    return PriceTable(
        name,
        input=5.0,
        cache_read=5.0 * read,
        cache_write=5.0 * write,
        output=25.0,
        cache_write_1h=5.0 * 2.0,
    )


PRICE_TABLES: dict[str, PriceTable] = {
    t.name: t
    for t in (
        # Anthropic's 5-minute cache, and OpenAI from GPT-5.6 on (explicit breakpoints): writes
        # at 1.25x the input price, reads at 0.1x.
        _table("default", read=0.1, write=1.25),
        # Anthropic's 1-hour cache: writes at 2x, reads at 0.1x.
        _table("anthropic-1h", read=0.1, write=2.0),
        # OpenAI's GPT-5 family before 5.6 (automatic caching): reads at 0.1x, no write premium.
        _table("gpt-5", read=0.1, write=1.0),
        # OpenAI's GPT-4.1 (automatic caching): reads at 0.25x, no write premium.
        _table("openai", read=0.25, write=1.0),
    )
}
"""The price tables, by what they model (per million tokens; only the multiples differ)."""
