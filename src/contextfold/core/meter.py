"""Per-session accounting: tokens, cost under cache pricing, KV-cache bytes, prefix reuse.

Cost is priced as a prefix cache bills it (reads, writes, uncached input, output), so a strategy
that breaks the cached prefix pays for it; folder calls are metered apart, under the same
prices.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from contextfold.core.errors import ConfigError
from contextfold.core.folds import FoldRecord
from contextfold.core.messages import common_prefix
from contextfold.core.view import View

__all__ = [
    "BLOCK_SIZE",
    "COST_KEYS",
    "FOLD_KEYS",
    "PRICE_TABLES",
    "PROFILES",
    "CallRecord",
    "Meter",
    "ModelProfile",
    "PriceTable",
    "get_profile",
    "shared_prefix_tokens",
]

BLOCK_SIZE = 16
"""Prefix-cache block size in tokens (vLLM's default)."""

COST_KEYS = ("cost_output_usd", "cost_read_usd", "cost_write_usd", "cost_input_usd")
"""The agent's cost split by what it pays for: the completions, cache reads, cache writes and
uncached input (they add up to ``cost_usd``). A context strategy moves the prompt's three
parts; none moves the output."""

FOLD_KEYS = (
    "fold_calls",
    "fold_prompt_tokens",
    "fold_completion_tokens",
    "fold_cost_usd",
    "fold_rejected",
    "fold_ms_median",
    "fold_cache_hits",
    "carriers_retained",
    "carriers_updated",
    "carriers_added",
)
"""The folder's figures, as :meth:`Meter.fold_summary` gives them (all 0 without a folder).
``carriers_*`` add up the ``persistence`` an accepted fold record's output declares (carryon's
per-fold statistic: carriers carried forward, revised, added); 0 for other strategies."""


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


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """The shape of a model's KV cache (from its published config) and its tokenizer."""

    name: str
    layers: int
    kv_heads: int
    head_dim: int
    dtype_bytes: int = 2
    tokenizer: str = "approx"
    """Counter spec for :func:`contextfold.core.counters.resolve_counter`."""

    @property
    def kv_bytes_per_token(self) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * self.dtype_bytes


PROFILES: dict[str, ModelProfile] = {
    p.name: p
    for p in (
        # HuggingFaceTB/SmolLM2-135M-Instruct: 30 layers, 9 heads of 64, 3 KV heads, bf16.
        ModelProfile("smollm2-135m", layers=30, kv_heads=3, head_dim=64, tokenizer="smollm2"),
        # Qwen/Qwen3-8B: 36 layers, 8 KV heads, head_dim 128, bf16.
        ModelProfile("qwen3-8b", layers=36, kv_heads=8, head_dim=128),
        # Qwen/Qwen3-14B: 40 layers, 8 KV heads, head_dim 128.
        ModelProfile("qwen3-14b", layers=40, kv_heads=8, head_dim=128),
        # Qwen/Qwen3-32B: 64 layers, 8 KV heads, head_dim 128.
        ModelProfile("qwen3-32b", layers=64, kv_heads=8, head_dim=128),
        # meta-llama/Llama-3.1-8B-Instruct: 32 layers, 8 KV heads, head_dim 128.
        ModelProfile("llama-3.1-8b", layers=32, kv_heads=8, head_dim=128),
        # meta-llama/Llama-3.1-70B-Instruct: 80 layers, 8 KV heads, head_dim 128.
        ModelProfile("llama-3.1-70b", layers=80, kv_heads=8, head_dim=128),
    )
}


def get_profile(name: str) -> ModelProfile:
    try:
        return PROFILES[name.lower()]
    except KeyError:
        raise ConfigError(f"unknown model profile {name!r}; known: {', '.join(PROFILES)}") from None


def shared_prefix_tokens(previous: View | None, current: View) -> int:
    """Tokens of the leading messages ``current`` shares with ``previous`` (not block-rounded)."""
    if previous is None:
        return 0
    return sum(current.tokens[: common_prefix(previous.messages, current.messages)])


@dataclass(frozen=True, slots=True)
class CallRecord:
    """Measurements of one model call."""

    prompt_tokens: int
    reused_tokens: int
    completion_tokens: int
    cost_usd: float
    render_ns: int
    removed_tokens: int
    unrecoverable_tokens: int


@dataclass(slots=True)
class Meter:
    """Accumulates :class:`CallRecord` s for one session under one price table and profile.

    Prefix reuse follows vLLM's automatic prefix caching: a prompt reuses the longest prefix it
    shares with the previous prompt, in whole blocks of :data:`BLOCK_SIZE` tokens. The shared
    prefix is found message by message; the first message that differs ends it, so a partly equal
    message counts as not shared (a conservative estimate). A real engine's reported cached tokens
    are used instead when there are some.

    A call's cost (:meth:`call_cost`): reused tokens at the cache-read price, the other whole
    blocks of the prompt at the cache-write price (written for the next call), the last partial
    block at the uncached input price, completion tokens at the output price. Folder calls are
    priced from the usage each :class:`~contextfold.core.folds.FoldCall` reports: ``fold_cost_usd``
    beside the agent's ``cost_usd``, ``total_cost_usd`` for both.
    """

    prices: PriceTable = field(default_factory=lambda: PRICE_TABLES["default"])
    profile: ModelProfile = field(default_factory=lambda: PROFILES["qwen3-8b"])
    block_size: int = BLOCK_SIZE
    tool_tokens: int = 0
    """Tokens of the tool schemas every prompt carries before its messages (``--tool-schemas``:
    the strategy's own; 0: tools not counted). Estimated prompts add them, and their cached
    prefix includes them from the second call on."""
    calls: list[CallRecord] = field(default_factory=list)
    folds: list[FoldRecord] = field(default_factory=list)
    """Fold records of the session's folds (accepted and rejected), in order."""
    _previous: View | None = None

    def record_call(
        self,
        view: View,
        *,
        completion_tokens: int,
        render_ns: int = 0,
        cached_tokens: int | None = None,
        prompt_tokens: int | None = None,
    ) -> CallRecord:
        """Account one call that sent ``view``. A real engine's own counts override the
        estimates: ``prompt_tokens`` (its template and tool schemas included) and
        ``cached_tokens`` (what its prefix cache served)."""
        tools = self.tool_tokens if prompt_tokens is None else 0  # an engine's count has them
        prompt = tools + (view.total_tokens if prompt_tokens is None else prompt_tokens)
        if cached_tokens is None:
            shared = shared_prefix_tokens(self._previous, view)
            shared += tools if self._previous is not None else 0
            cached_tokens = shared // self.block_size * self.block_size
        self._previous = view
        record = CallRecord(
            prompt_tokens=prompt,
            reused_tokens=min(cached_tokens, prompt),
            completion_tokens=completion_tokens,
            cost_usd=self.call_cost(prompt, min(cached_tokens, prompt), completion_tokens),
            render_ns=render_ns,
            removed_tokens=view.removed_tokens,
            unrecoverable_tokens=view.unrecoverable_tokens,
        )
        self.calls.append(record)
        return record

    def record_folds(self, records: Iterable[FoldRecord]) -> None:
        """Account folds (their folder calls are metered apart from the agent's)."""
        self.folds.extend(records)

    def fold_summary(self) -> dict[str, float | int]:
        """The folder's totals: calls, tokens, cost, rejections, median wall time per call."""
        calls = [c for record in self.folds for c in record.calls]
        ms = [c.ms for c in calls]
        return {
            "fold_calls": len(calls),
            "fold_prompt_tokens": sum(c.prompt_tokens for c in calls),
            "fold_completion_tokens": sum(c.completion_tokens for c in calls),
            "fold_cost_usd": sum(
                self.call_cost(c.prompt_tokens, c.cached_tokens, c.completion_tokens) for c in calls
            ),
            "fold_rejected": sum(not r.accepted for r in self.folds),
            "fold_ms_median": statistics.median(ms) if ms else 0.0,
            "fold_cache_hits": sum(c.cache_hit for c in calls),
            **{f"carriers_{k}": self._persistence(k) for k in ("retained", "updated", "added")},
        }

    def _persistence(self, key: str) -> int:
        """The sum of one persistence figure over the accepted folds that declare it."""
        total = 0
        for record in self.folds:
            figures = record.output.get("persistence") if record.accepted else None
            if isinstance(figures, Mapping):
                total += int(figures.get(key, 0))
        return total

    def call_cost(self, prompt: int, reused: int, completion: int) -> float:
        written = prompt // self.block_size * self.block_size - reused
        uncached = prompt - reused - max(written, 0)
        p = self.prices
        usd = (
            reused * p.cache_read
            + max(written, 0) * p.cache_write
            + uncached * p.input
            + completion * p.output
        )
        return usd / 1e6

    def cost_parts(self, prompt: int, reused: int, completion: int) -> dict[str, float]:
        """A call's cost split as :data:`COST_KEYS` (USD): reused tokens at the read price, the
        prompt's other whole blocks at the write price, the rest of it at the input price, the
        completion at the output price."""
        written = max(prompt // self.block_size * self.block_size - reused, 0)
        uncached = prompt - reused - written
        p = self.prices
        return {
            "cost_output_usd": completion * p.output / 1e6,
            "cost_read_usd": reused * p.cache_read / 1e6,
            "cost_write_usd": written * p.cache_write / 1e6,
            "cost_input_usd": uncached * p.input / 1e6,
        }

    def cost_split(self) -> dict[str, float]:
        """The agent's calls' cost, summed by :data:`COST_KEYS`."""
        out = dict.fromkeys(COST_KEYS, 0.0)
        for c in self.calls:
            for key, usd in self.cost_parts(
                c.prompt_tokens, c.reused_tokens, c.completion_tokens
            ).items():
                out[key] += usd
        return out

    @property
    def prompt_tokens(self) -> int:
        return sum(c.prompt_tokens for c in self.calls)

    @property
    def peak_context_tokens(self) -> int:
        return max((c.prompt_tokens for c in self.calls), default=0)

    @property
    def kv_bytes_peak(self) -> int:
        return self.peak_context_tokens * self.profile.kv_bytes_per_token

    @property
    def prefix_cache_reuse(self) -> float:
        total = self.prompt_tokens
        return sum(c.reused_tokens for c in self.calls) / total if total else 0.0

    def summary(self) -> dict[str, float | int]:
        """The session's totals, as JSON-ready numbers (the agent's, then the folder's)."""
        cost = sum(c.cost_usd for c in self.calls)
        folds = self.fold_summary()
        return {
            "calls": len(self.calls),
            "prompt_tokens": self.prompt_tokens,
            "peak_context_tokens": self.peak_context_tokens,
            "completion_tokens": sum(c.completion_tokens for c in self.calls),
            "cost_usd": cost,
            **self.cost_split(),
            "kv_bytes_peak": self.kv_bytes_peak,
            "prefix_cache_reuse": self.prefix_cache_reuse,
            "removed_tokens": sum(c.removed_tokens for c in self.calls),
            "unrecoverable_tokens": sum(c.unrecoverable_tokens for c in self.calls),
            **folds,
            "total_cost_usd": cost + folds["fold_cost_usd"],
        }
