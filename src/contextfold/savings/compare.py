"""``contextfold savings --compare``: the treated sessions beside the control group
(``serve --control``) on the user's own traffic, each measure with a seeded bootstrap interval
and, on the outcome measures, an equivalence test (:func:`compare`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from contextfold.core.ledger import Arm, LedgerEntry
from contextfold.savings.sources import FINAL_STOP

__all__ = ["DEPTHS", "Comparison", "Unit", "compare", "units"]

DEPTHS = (8, 32, 128)
"""Where the depth bins end, in steps of the conversation a call was sent."""
RESAMPLES = 2000


@dataclass(slots=True)
class Unit:
    """One randomized unit's figures (the sessions of one family, or of one conversation)."""

    arm: Arm
    calls: int = 0
    restores: int = 0
    errors: int = 0
    early_stop: bool = False
    tokens: int = 0
    usd: float = 0.0
    bins: dict[int, list[float]] = field(default_factory=dict)
    """By depth bin (its index in :data:`DEPTHS`, or ``len(DEPTHS)``): dollars and calls."""


def _depth(step: int) -> int:
    return next((i for i, end in enumerate(DEPTHS) if step <= end), len(DEPTHS))


def units(entries: Iterable[LedgerEntry]) -> list[Unit]:
    """The ledger's entries summed by unit; a unit's last call says whether it stopped early."""
    out: dict[str, Unit] = {}
    for e in entries:
        u = out.setdefault(e.unit, Unit(e.arm))
        u.calls += not e.restore
        u.restores += e.restore
        u.errors += e.error is not None
        u.early_stop = e.error is not None or e.stop != FINAL_STOP
        u.tokens += e.billed.prompt_tokens
        u.usd += e.billed_usd
        spent = u.bins.setdefault(_depth(e.step), [0.0, 0.0])
        spent[0] += e.billed_usd
        spent[1] += not e.restore
    return list(out.values())


@dataclass(frozen=True, slots=True)
class Measure:
    name: str
    num: Callable[[Unit], float]
    den: Callable[[Unit], float]
    outcome: bool = False
    """Whether it is an outcome measure (the equivalence test is run on it)."""
    money: bool = False


@dataclass(frozen=True, slots=True)
class Comparison:
    """One measure in each arm, their relative difference and its intervals, and what that
    means (``equivalent``, ``different``, ``inconclusive`` on an outcome measure; ``lower``,
    ``higher``, ``unclear``, or ``same`` when both are 0, on the others)."""

    name: str
    treated: float
    control: float
    difference: float
    low: float
    high: float
    """The 95% interval of the difference."""
    low90: float
    high90: float
    verdict: str
    outcome: bool
    money: bool


def _measures(entries: list[Unit]) -> list[Measure]:
    out = [
        Measure("cost per call", lambda u: u.usd, lambda u: u.calls, money=True),
    ]
    depths = sorted({d for u in entries for d in u.bins})
    for d in depths:
        if all(any(d in u.bins for u in entries if u.arm == arm) for arm in ("treated", "control")):
            out.append(Measure(f"  at steps {_bin_label(d)}", _bin(d, 0), _bin(d, 1), money=True))
    out += [
        Measure("tokens sent per call", lambda u: u.tokens, lambda u: u.calls),
        Measure("restores per session", lambda u: u.restores, lambda u: 1),
        Measure("calls per session", lambda u: u.calls, lambda u: 1, outcome=True),
        Measure("upstream errors/session", lambda u: u.errors, lambda u: 1, outcome=True),
        Measure("early stops (share)", lambda u: u.early_stop, lambda u: 1, outcome=True),
    ]
    return out


def _bin(depth: int, part: int) -> Callable[[Unit], float]:
    return lambda u: u.bins.get(depth, [0.0, 0.0])[part]


def _bin_label(depth: int) -> str:
    start = 1 if depth == 0 else DEPTHS[depth - 1] + 1
    return f"{start}-{DEPTHS[depth]}" if depth < len(DEPTHS) else f"{start}+"


def compare(
    entries: Iterable[LedgerEntry], *, margin: float, seed: int = 0, resamples: int = RESAMPLES
) -> list[Comparison]:
    """Every measure compared between the arms (both must hold units).

    Sessions are compared by their unit (what the arm was drawn for: a session family, or a
    conversation and its branches), so the bootstrap resamples what was randomized. Each
    measure is a ratio of sums over units (cost over calls, calls over sessions, ...); its
    difference is treated over control less one, with a percentile interval (units resampled
    within each arm, ``resamples`` times, from ``seed``). On the outcome measures (calls per
    session, upstream errors, early stops) the equivalence test is two one-sided tests at 5%
    with the relative ``margin``: it holds when the 90% interval lies inside ±margin."""
    found = units(entries)
    arms = {arm: [u for u in found if u.arm == arm] for arm in ("treated", "control")}
    rng = np.random.default_rng(seed)
    picks = {arm: rng.integers(0, len(us), size=(resamples, len(us))) for arm, us in arms.items()}
    return [_compared(m, arms, picks, margin) for m in _measures(found)]


def _compared(
    measure: Measure,
    arms: dict[str, list[Unit]],
    picks: dict[str, np.ndarray],
    margin: float,
) -> Comparison:
    point, drawn = {}, {}
    for arm, us in arms.items():
        num = np.array([measure.num(u) for u in us], dtype=float)
        den = np.array([measure.den(u) for u in us], dtype=float)
        point[arm] = _ratio(num.sum(), den.sum())
        with np.errstate(divide="ignore", invalid="ignore"):
            drawn[arm] = num[picks[arm]].sum(axis=1) / den[picks[arm]].sum(axis=1)
    difference = _relative(np.array(point["treated"]), np.array(point["control"]))
    diffs = _relative(drawn["treated"], drawn["control"])
    diffs = diffs[~np.isnan(diffs)]
    low, high, low90, high90 = (
        np.percentile(diffs, [2.5, 97.5, 5, 95]) if diffs.size else [np.nan] * 4
    )
    both_zero = point["treated"] == 0 and point["control"] == 0
    verdict = _verdict(measure.outcome, both_zero, (low, high), (low90, high90), margin)
    return Comparison(
        measure.name, point["treated"], point["control"], float(difference),
        float(low), float(high), float(low90), float(high90), verdict, measure.outcome,
        measure.money,
    )  # fmt: skip


def _ratio(num: float, den: float) -> float:
    return float(num / den) if den else 0.0


def _relative(treated: np.ndarray, control: np.ndarray) -> np.ndarray:
    """treated / control - 1: 0 where both are 0, infinite where only control is."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = treated / control - 1.0
    return np.where((treated == 0) & (control == 0), 0.0, out)


def _verdict(
    outcome: bool,
    both_zero: bool,
    interval: tuple[float, float],
    narrow: tuple[float, float],
    margin: float,
) -> str:
    low, high = interval
    if both_zero and not outcome:
        return "same"
    if outcome:
        if both_zero or (-margin < narrow[0] and narrow[1] < margin):
            return "equivalent"
        return "different" if low > 0 or high < 0 else "inconclusive"
    if low > 0:
        return "higher"
    return "lower" if high < 0 else "unclear"
