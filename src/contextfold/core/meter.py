"""Per-session accounting: tokens, cost under cache pricing, KV-cache bytes, prefix reuse.

Cost is priced as a prefix cache bills it (reads, writes, uncached input, output), so a strategy
that breaks the cached prefix pays for it; folder calls are metered apart, under the same
prices.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from contextfold.core.billing import BilledUsage
from contextfold.core.caches import BLOCK_SIZE, VLLM, CacheRule
from contextfold.core.calibration import Counting
from contextfold.core.folds import FoldRecord
from contextfold.core.messages import Message, common_prefix
from contextfold.core.prices import COST_KEYS, PRICE_TABLES, PriceTable
from contextfold.core.profiles import PROFILES, ModelProfile, get_profile
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


def shared_prefix_tokens(previous: View | None, current: View) -> int:
    """Tokens of the leading messages ``current`` shares with ``previous`` (not block-rounded)."""
    if previous is None:
        return 0
    return sum(current.tokens[: common_prefix(previous.messages, current.messages)])


@dataclass(frozen=True, slots=True)
class _Sent:
    """What the previous call sent: its messages, their counts, what the cache holds of it."""

    messages: tuple[Message, ...]
    counts: list[float]
    cached: int
    at: float | None


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
    usage: BilledUsage = field(default_factory=BilledUsage)
    """The call as its cache bills it: reads, writes (by lifetime), plain input, output."""


@dataclass(slots=True)
class Meter:
    """Accumulates :class:`CallRecord` s for one session under one price table and profile.

    A prompt reuses the longest prefix it shares with the previous prompt, as the provider's
    cache (``cache``) holds it: by default vLLM's automatic prefix caching, in whole blocks of
    :data:`BLOCK_SIZE` tokens; a provider's own rule for a model it serves
    (:func:`~contextfold.core.caches.cache_rule`: exact to a breakpoint, a minimum, entries
    that expire between calls made far apart). The shared prefix is found message by message;
    the first message that differs ends it, so a partly equal message counts as not shared (a
    conservative estimate). A real engine's reported cached tokens are used instead when there
    are some. Prompts are counted by ``counting``
    (:class:`~contextfold.core.calibration.Counting`): the view's own counts, or, for a session
    whose log records its bill, the provider's resend rule and the counter calibrated by it.

    A call's cost: reused tokens at the cache-read price, the rest of the prompt the cache
    holds at the cache-write price (written for the next call), what it does not hold at the
    uncached input price, completion tokens at the output price. Folder calls are priced from
    the usage each :class:`~contextfold.core.folds.FoldCall` reports: ``fold_cost_usd`` beside
    the agent's ``cost_usd``, ``total_cost_usd`` for both.
    """

    prices: PriceTable = field(default_factory=lambda: PRICE_TABLES["default"])
    profile: ModelProfile = field(default_factory=lambda: PROFILES["qwen3-8b"])
    tool_tokens: int = 0
    """Tokens of the tool schemas every prompt carries before its messages (``--tool-schemas``:
    the strategy's own; 0: tools not counted). Estimated prompts add them, and their cached
    prefix includes them from the second call on."""
    cache: CacheRule = VLLM
    counting: Counting = field(default_factory=Counting)
    calls: list[CallRecord] = field(default_factory=list)
    folds: list[FoldRecord] = field(default_factory=list)
    """Fold records of the session's folds (accepted and rejected), in order."""
    _previous: _Sent | None = None

    @property
    def unseen_tokens(self) -> int:
        """Tokens (of the counter) every prompt holds before the view's messages: the tool
        schemas and the calibration's unlogged prefix, at the session's scale."""
        cal = self.counting.calibration
        return self.tool_tokens + round(cal.prefix / cal.scale)

    def record_call(
        self,
        view: View,
        *,
        completion_tokens: int,
        render_ns: int = 0,
        cached_tokens: int | None = None,
        prompt_tokens: int | None = None,
        at: float | None = None,
    ) -> CallRecord:
        """Account one call that sent ``view`` (at time ``at``, seconds since the epoch, where
        known: an expired cache entry is not read). A real engine's own counts override the
        estimates: ``prompt_tokens`` (its template and tool schemas included) and
        ``cached_tokens`` (what its prefix cache served)."""
        counts = self.counting.counts(view.messages, view.tokens)
        tools = self.tool_tokens if prompt_tokens is None else 0  # an engine's count has them
        prompt = self.counting.prompt(counts, tools) if prompt_tokens is None else prompt_tokens
        read = self._read(view, counts, tools, at) if cached_tokens is None else cached_tokens
        cal = self.counting.calibration
        tail = cal.tail if self._previous is not None else cal.first_tail
        usage = self.cache.bill(prompt, completion_tokens, read=read, tail=tail, hour=cal.hour)
        tail = tail if self.cache.breakpoints else 0
        self._previous = _Sent(view.messages, counts, self.cache.cached(prompt - tail), at)
        record = CallRecord(
            prompt_tokens=prompt,
            reused_tokens=usage.cache_read_tokens,
            completion_tokens=completion_tokens,
            cost_usd=usage.cost(self.prices),
            render_ns=render_ns,
            removed_tokens=view.removed_tokens,
            unrecoverable_tokens=view.unrecoverable_tokens,
            usage=usage,
        )
        self.calls.append(record)
        return record

    def _read(self, view: View, counts: list[float], tools: int, at: float | None) -> int:
        """What the cache serves of a prompt: the prefix it shares with the previous prompt,
        as far as that one was cached (the first call: what earlier sessions cached of the
        unlogged prefix)."""
        before, cal = self._previous, self.counting.calibration
        if before is None:
            return self.cache.cached(cal.prefix_read)
        gap = at - before.at if at is not None and before.at is not None else None
        if not self.cache.alive(gap):
            return 0
        same = common_prefix(before.messages, view.messages)
        same = next((i for i in range(same) if counts[i] != before.counts[i]), same)
        shared = self.counting.prompt(counts[:same], tools)
        return self.cache.cached(min(shared, before.cached))

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
        """A call's cost in USD (a folder call's, from the usage it reports)."""
        return self.cache.bill(prompt, completion, read=reused).cost(self.prices)

    def cost_split(self) -> dict[str, float]:
        """The agent's calls' cost, summed by :data:`COST_KEYS`."""
        out = dict.fromkeys(COST_KEYS, 0.0)
        for c in self.calls:
            for key, usd in c.usage.cost_parts(self.prices).items():
                out[key] += usd
        return out

    @property
    def usage(self) -> BilledUsage:
        """The agent's calls as their cache bills them, summed."""
        return sum((c.usage for c in self.calls), BilledUsage())

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
