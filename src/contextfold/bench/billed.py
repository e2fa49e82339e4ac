"""A recorded session's bill, and the meter every strategy of it is measured with.

Where a log records what each call was billed (:attr:`~contextfold.importers.base.Trajectory.
calls`), the session's counting is calibrated by it (:func:`session_billing`): one
:class:`~contextfold.core.calibration.Calibration` from the recorded conversation, shared by
every strategy's meter, so that no strategy is measured by another counter. The bill itself is
kept (:class:`Bill`) for the report that sets it beside the simulated ``full``.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from contextfold.core.billing import BilledUsage, Thinking, model_price, native_prices, prices_for
from contextfold.core.caches import VLLM, CacheRule, cache_rule
from contextfold.core.calibration import THINKING_WEIGHT, Calibration, Counting, calibrate
from contextfold.core.history import Step
from contextfold.core.messages import Message
from contextfold.core.meter import Meter, ModelProfile, PriceTable
from contextfold.core.tokens import TokenCounter, count_message
from contextfold.importers.base import Trajectory

if TYPE_CHECKING:
    from contextfold.bench.replay import ReplayResult

__all__ = [
    "MEASURES",
    "Bill",
    "SessionBilling",
    "bill_entry",
    "bill_row",
    "billed_json",
    "compared",
    "measures",
    "session_billing",
    "usage_row",
]


@dataclass(frozen=True, slots=True)
class Bill:
    """What a session's recorded calls were billed, as the log says."""

    usage: BilledUsage
    """Every call's usage, its output where the log has no final count the calibrated
    estimate (the same every strategy is given)."""
    logged_output: int
    """The output the log records (a lower bound where a count is not final)."""
    calls: int
    final_outputs: int
    """Calls whose output count in the log is the final one."""


@dataclass(frozen=True, slots=True)
class SessionBilling:
    """How a session's strategies are metered: its model's prices and cache rule, and its
    counting (calibrated where the log records the bill)."""

    model: str | None = None
    cache: CacheRule = VLLM
    calibration: Calibration = field(default_factory=Calibration)
    thinking: Thinking = "all"
    bill: Bill | None = None

    def meter(self, prices: PriceTable, profile: ModelProfile, counter: TokenCounter) -> Meter:
        """A fresh meter for one strategy: ``prices`` at the model's own prices."""
        counting = Counting(counter if self.model else None, self.thinking, self.calibration)
        return Meter(
            prices=prices_for(prices, self.model),
            profile=profile,
            cache=self.cache,
            counting=counting,
        )


def session_billing(
    traj: Trajectory,
    steps: Sequence[Step],
    counter: TokenCounter,
    *,
    thinking_weight: float = THINKING_WEIGHT,
    thinking: Thinking | None = None,
) -> SessionBilling:
    """The billing of ``traj`` (its ``steps`` counted by ``counter``): the model's rules, and
    where every recorded call's usage is known and billed the conversation as recorded, the
    calibration and the bill. ``thinking_weight`` and ``thinking`` (which turns' thinking is
    counted; default: the model's rule) are for measuring the calibration itself."""
    known = model_price(traj.model)
    if thinking is None:
        thinking = known.thinking if known else "all"
    billed = _billed(traj, steps)
    if billed is None:
        return SessionBilling(traj.model, cache_rule(traj.model), thinking=thinking)
    counting = Counting(counter, thinking, Calibration(thinking=thinking_weight))
    prompts, replies = _counted(traj, steps, counting, counter)
    calibration = calibrate(
        prompts,
        billed,
        replies=replies,
        outputs=[u.output_tokens for u in billed],
        final=[c.output_final for c in traj.calls],
        thinking=thinking_weight,
    )
    total = sum(billed, BilledUsage())
    output = sum(calibration.output(k, r) for k, r in enumerate(replies))
    bill = Bill(
        usage=replace(total, output_tokens=output),
        logged_output=total.output_tokens,
        calls=len(billed),
        final_outputs=sum(calibration.final),
    )
    cache = cache_rule(traj.model, hour=calibration.hour >= 0.5)
    return SessionBilling(traj.model, cache, calibration, thinking, bill)


def _billed(traj: Trajectory, steps: Sequence[Step]) -> list[BilledUsage] | None:
    """Each recorded call's usage, when the log has one for every assistant step and they
    billed the conversation as recorded; else None."""
    asked = sum(step.kind == "assistant" for step in steps)
    if not traj.bills_conversation or len(traj.calls) != asked or asked == 0:
        return None
    usages = [c.usage for c in traj.calls if c.usage is not None]
    return usages if len(usages) == asked else None


def _counted(
    traj: Trajectory, steps: Sequence[Step], counting: Counting, counter: TokenCounter
) -> tuple[list[float], list[float]]:
    """The recorded conversation before each call as its provider counts it (unscaled), and
    each call's reply as its output."""
    messages: list[Message] = []
    tokens: list[int] = []
    if traj.system is not None:
        messages.append(traj.system)
        tokens.append(count_message(counter, traj.system))
    prompts, replies = [], []
    for step in steps:
        if step.kind == "assistant":
            prompts.append(sum(counting.counts(messages, tokens)))
            replies.append(counting.reply(step.messages[0], step.tokens[0]))
        messages.extend(step.messages)
        tokens.extend(step.tokens)
    return prompts, replies


def usage_row(usage: BilledUsage) -> dict[str, Any]:
    """A usage as a replay row's keys (output is the row's ``completion_tokens``)."""
    return {
        "input_tokens": usage.input_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "cache_write_1h_tokens": usage.cache_write_1h_tokens,
    }


MEASURES: tuple[tuple[str, str], ...] = (
    ("prompt_tokens", "prompt tokens"),
    ("cache_read_tokens", "cache reads"),
    ("cache_write_tokens", "cache writes"),
    ("input_tokens", "uncached input"),
    ("output_tokens", "output"),
    ("cost_usd", "cost $"),
)
"""The measures a bill is compared on: key and name (writes of both lifetimes together)."""


def measures(usage: BilledUsage, model: str | None) -> dict[str, float]:
    """``usage`` as :data:`MEASURES`, its cost at ``model``'s own prices."""
    return {
        "prompt_tokens": usage.prompt_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens + usage.cache_write_1h_tokens,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cost_usd": usage.cost(native_prices(model)),
    }


def bill_row(traj: Trajectory, bill: Bill) -> dict[str, Any]:
    """A trajectory's bill as JSON: its usage, split, and cost at its model's own prices."""
    return {
        "id": traj.id,
        "source": traj.source,
        "model": traj.model,
        "calls": bill.calls,
        "final_outputs": bill.final_outputs,
        "logged_output_tokens": bill.logged_output,
        "cache_write_1h_tokens": bill.usage.cache_write_1h_tokens,
        **measures(bill.usage, traj.model),
    }


def simulated(row: Mapping[str, Any]) -> BilledUsage:
    """What a replay row (:func:`usage_row`) metered, as a usage."""
    return BilledUsage(
        int(row.get("input_tokens", 0)),
        int(row.get("cache_read_tokens", 0)),
        int(row.get("cache_write_tokens", 0)),
        int(row.get("cache_write_1h_tokens", 0)),
        int(row.get("completion_tokens", 0)),
    )


def compared(
    bills: Sequence[Mapping[str, Any]], full: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Each bill beside ``full``'s simulated row of the same trajectory (those it has):
    ``billed``, ``full`` and each measure's ``error`` (simulated / billed - 1)."""
    rows = {(r["source"], r["id"]): r for r in full}
    out = []
    for bill in bills:
        row = rows.get((bill["source"], bill["id"]))
        if row is None:
            continue
        entry = bill_entry(bill)
        sim = measures(simulated(row), bill["model"])
        out.append({**entry, "full": sim, "error": errors(entry["billed"], sim)})
    return out


def bill_entry(bill: Mapping[str, Any]) -> dict[str, Any]:
    """A bill row (:func:`bill_row`) with its measures under ``billed``."""
    keys = {key for key, _ in MEASURES}
    entry = {k: v for k, v in bill.items() if k not in keys}
    return {**entry, "billed": {key: bill[key] for key, _ in MEASURES}}


def errors(billed: Mapping[str, float], sim: Mapping[str, float]) -> dict[str, float | None]:
    """Each measure's error: simulated / billed - 1 (None where nothing was billed)."""
    return {key: sim[key] / billed[key] - 1 if billed[key] else None for key, _ in MEASURES}


def billed_json(result: ReplayResult) -> dict[str, Any]:
    """The bills of a replay in total (``billed``), and beside them, where ``full`` was
    replayed, its simulated figures (``full``), each measure's ``error``, the per-session
    ``spread`` of the errors and every trajectory's comparison (``sessions``)."""
    bills = result.bills
    total = {key: sum(b[key] for b in bills) for key, _ in MEASURES}
    out: dict[str, Any] = {
        "trajectories": len(bills),
        "calls": sum(b["calls"] for b in bills),
        "final_outputs": sum(b["final_outputs"] for b in bills),
        "billed": total,
    }
    full = result.strategies.get("full")
    rows = compared(bills, full.rows if full is not None else [])
    if rows:
        billed = {key: sum(r["billed"][key] for r in rows) for key, _ in MEASURES}
        sim = {key: sum(r["full"][key] for r in rows) for key, _ in MEASURES}
        out.update(compared=len(rows), billed=billed, full=sim, error=errors(billed, sim))
        out["spread"] = {key: spread([r["error"][key] for r in rows]) for key, _ in MEASURES}
    out["sessions"] = rows or [bill_entry(b) for b in bills]
    return out


def spread(values: Sequence[float | None]) -> dict[str, float] | None:
    """The median, least and greatest of the errors known (None when none is)."""
    known = sorted(v for v in values if v is not None)
    if not known:
        return None
    return {"median": statistics.median(known), "min": known[0], "max": known[-1]}
