"""What a provider bills: one call's usage in its cache terms, and each model's own prices.

A price table (:data:`~contextfold.core.prices.PRICE_TABLES`) says how cache reads and writes are
priced as multiples of the input price; a model's prices (:data:`MODEL_PRICES`) say what its
input and output cost. :func:`prices_for` puts the two together, so a session that names its
model is priced in that model's dollars under the table asked for; :func:`native_prices` is the
table of the model's own provider, which is how its bill was computed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from contextfold.core.prices import COST_KEYS, PRICE_TABLES, PriceTable

__all__ = [
    "MODEL_PRICES",
    "BilledUsage",
    "ModelPrice",
    "Thinking",
    "model_price",
    "native_prices",
    "prices_for",
]


@dataclass(frozen=True, slots=True)
class BilledUsage:
    """What a provider reported, and billed, for one model call.

    The prompt is split as a prefix cache bills it: tokens read from the cache, tokens written
    to it (Anthropic's 5-minute and 1-hour writes apart; OpenAI and Gemini write for free, so
    theirs are 0), and the rest as plain input. ``output_tokens`` includes any reasoning.
    """

    input_tokens: int = 0
    """Prompt tokens neither read from the cache nor written to it."""
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    """Written to the cache with the short lifetime (Anthropic: 5 minutes)."""
    cache_write_1h_tokens: int = 0
    """Written to the cache with Anthropic's 1-hour lifetime."""
    output_tokens: int = 0

    @property
    def prompt_tokens(self) -> int:
        """Every prompt token, however it was billed."""
        return (
            self.input_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
            + self.cache_write_1h_tokens
        )

    def __add__(self, other: BilledUsage) -> BilledUsage:
        return BilledUsage(
            self.input_tokens + other.input_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.cache_write_1h_tokens + other.cache_write_1h_tokens,
            self.output_tokens + other.output_tokens,
        )

    def cost_parts(self, prices: PriceTable) -> dict[str, float]:
        """Its cost in USD split as :data:`~contextfold.core.prices.COST_KEYS`."""
        written = (
            self.cache_write_tokens * prices.cache_write
            + self.cache_write_1h_tokens * prices.cache_write_1h
        )
        parts = {
            "cost_output_usd": self.output_tokens * prices.output,
            "cost_read_usd": self.cache_read_tokens * prices.cache_read,
            "cost_write_usd": written,
            "cost_input_usd": self.input_tokens * prices.input,
        }
        return {key: parts[key] / 1e6 for key in COST_KEYS}

    def cost(self, prices: PriceTable) -> float:
        """Its cost in USD under ``prices``."""
        return sum(self.cost_parts(prices).values())


Thinking = Literal["all", "last"]
"""Which assistant turns' thinking a provider counts in a prompt (:attr:`ModelPrice.thinking`)."""


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """A model family's list prices in USD per million tokens, and how its provider bills the
    cache and counts the thinking a prompt resends."""

    prefix: str
    """Model names starting with this (after any ``provider/`` part) are this family."""
    input: float
    output: float
    table: str
    """The name of the price table its provider bills the cache by."""
    cache_min: int = 1024
    """The shortest prefix its provider caches (Anthropic: by model; OpenAI: 1,024)."""
    thinking: Thinking = "all"
    """Which assistant turns' thinking a prompt resends and is counted for: ``all``, or only
    the ``last`` turn's (the one since the last user message that is no tool result)."""


_LAST: Thinking = "last"

MODEL_PRICES: tuple[ModelPrice, ...] = (
    # Anthropic (list prices; the smallest prefix each caches; Opus from 4.5 and Sonnet from
    # 4.6 keep every turn's thinking, earlier models only the last turn's).
    ModelPrice("claude-opus-5-5", 4.0, 20.0, "default", cache_min=512),
    ModelPrice("claude-opus-5", 5.0, 25.0, "default", cache_min=512),
    ModelPrice("claude-opus-4-8", 5.0, 25.0, "default"),
    ModelPrice("claude-opus-4-7", 5.0, 25.0, "default", cache_min=2048),
    ModelPrice("claude-opus-4-6", 5.0, 25.0, "default", cache_min=4096),
    ModelPrice("claude-opus-4-5", 5.0, 25.0, "default", cache_min=4096),
    ModelPrice("claude-opus-4", 15.0, 75.0, "default", thinking=_LAST),  # 4 and 4.1
    ModelPrice("claude-sonnet-4-5", 3.0, 15.0, "default", thinking=_LAST),
    ModelPrice("claude-sonnet-4-0", 3.0, 15.0, "default", thinking=_LAST),
    ModelPrice("claude-sonnet-4-2", 3.0, 15.0, "default", thinking=_LAST),  # 4, dated
    ModelPrice("claude-sonnet", 3.0, 15.0, "default"),  # 4.6 and later
    ModelPrice("claude-3-7-sonnet", 3.0, 15.0, "default", thinking=_LAST),
    ModelPrice("claude-3-5-sonnet", 3.0, 15.0, "default", thinking=_LAST),
    ModelPrice("claude-haiku-4", 1.0, 5.0, "default", cache_min=4096, thinking=_LAST),
    ModelPrice("claude-3-5-haiku", 0.8, 4.0, "default", cache_min=2048, thinking=_LAST),
    ModelPrice("claude-3-haiku", 0.25, 1.25, "default", cache_min=2048, thinking=_LAST),
    # OpenAI: GPT-5 and its codex variants read the cache at 0.1x and write for free.
    ModelPrice("gpt-5-nano", 0.05, 0.40, "gpt-5"),
    ModelPrice("gpt-5-mini", 0.25, 2.0, "gpt-5"),
    ModelPrice("gpt-5.2", 1.75, 14.0, "gpt-5"),
    ModelPrice("gpt-5", 1.25, 10.0, "gpt-5"),
    ModelPrice("gpt-4.1-nano", 0.10, 0.40, "openai"),
    ModelPrice("gpt-4.1-mini", 0.40, 1.60, "openai"),
    ModelPrice("gpt-4.1", 2.0, 8.0, "openai"),
    ModelPrice("gpt-4o-mini", 0.15, 0.60, "openai"),
    ModelPrice("gpt-4o", 2.50, 10.0, "openai"),
    # Google (prompts up to 200k tokens; implicit cache reads at 0.1x on Gemini 3, 0.25x on 2.5).
    ModelPrice("gemini-3-pro", 2.0, 12.0, "gpt-5"),
    ModelPrice("gemini-2.5-pro", 1.25, 10.0, "openai"),
    ModelPrice("gemini-2.5-flash-lite", 0.10, 0.40, "openai"),
    ModelPrice("gemini-2.5-flash", 0.30, 2.50, "openai"),
)
"""Known model families, the more specific name first (the first prefix that matches wins).
Prices as the providers list them; a model not here is priced at the tables' nominal $5 / $25."""


def model_price(model: str | None) -> ModelPrice | None:
    """The family ``model`` belongs to, or None (no model named, or one not known).

    Dated suffixes (``-20250929``) and provider prefixes (``anthropic/``, ``models/``) are
    ignored: ``claude-sonnet-4-5-20250929`` is a ``claude-sonnet``.
    """
    if not model:
        return None
    name = model.lower().rsplit("/", 1)[-1]
    return next((m for m in MODEL_PRICES if name.startswith(m.prefix)), None)


def prices_for(table: PriceTable, model: str | None) -> PriceTable:
    """``table``'s cache multiples at ``model``'s input and output prices (``table`` itself
    for a model not known)."""
    known = model_price(model)
    if known is None:
        return table
    scale = known.input / table.input
    return replace(
        table,
        input=known.input,
        cache_read=table.cache_read * scale,
        cache_write=table.cache_write * scale,
        cache_write_1h=table.cache_write_1h * scale,
        output=known.output,
    )


def native_prices(model: str | None) -> PriceTable:
    """The prices ``model``'s own provider bills it at (the ``default`` table's nominal prices
    for a model not known)."""
    known = model_price(model)
    table = PRICE_TABLES[known.table if known else "default"]
    return prices_for(table, model)
