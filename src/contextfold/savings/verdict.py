"""``savings --compare`` for people and machines: the arms side by side in a table that fits 80
columns, and in words what the equivalence test found (:func:`compare_table`,
:func:`in_words`, :func:`compare_json`)."""

from __future__ import annotations

import math
from typing import Any

from rich import box
from rich.table import Table

from contextfold.bench.report import money, short_count
from contextfold.savings.compare import Comparison

__all__ = ["compare_json", "compare_table", "in_words"]


def compare_table(rows: list[Comparison], counts: dict[str, int], margin: float) -> Table:
    """A row per measure: each arm's value, the difference with its 95% interval, the verdict."""
    table = Table(
        title=f"treated ({counts['treated']} sessions) against control ({counts['control']})",
        box=box.SIMPLE_HEAD,
        collapse_padding=True,
        caption=(
            "difference: treated / control - 1, with its 95% bootstrap interval (sessions "
            f"resampled); outcomes: equivalent when the 90% interval is within ±{margin:.0%} "
            "(two one-sided tests at 5%), different when the 95% interval excludes 0"
        ),
    )
    table.add_column("measure", no_wrap=True)
    table.add_column("treated", justify="right", no_wrap=True)
    table.add_column("control", justify="right", no_wrap=True)
    table.add_column("difference (95%)", justify="right", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    for row in rows:
        value = _money if row.money else _count
        table.add_row(
            row.name,
            value(row.treated),
            value(row.control),
            f"{_share(row.difference)} {_interval(row.low, row.high)}",
            row.verdict,
        )
    return table


def in_words(rows: list[Comparison], margin: float) -> str:
    """What the outcome measures' verdicts mean, in a sentence or two."""
    outcomes = [r for r in rows if r.outcome]
    different = [r for r in outcomes if r.verdict == "different"]
    unsure = [r for r in outcomes if r.verdict == "inconclusive"]
    if different:
        named = "; ".join(f"{r.name}: {_share(r.difference)}" for r in different)
        head = (
            "Folding changed how the agents behave on your traffic "
            f"({named}, treated against control)."
        )
    elif unsure:
        named = ", ".join(r.name for r in unsure)
        head = (
            f"Not yet shown equivalent within ±{margin:.0%} on {named}, nor different: "
            "keep the control group running for more sessions."
        )
    else:
        head = (
            "Folding is equivalent to no folding on every outcome measured "
            f"(within ±{margin:.0%}): the agents did not flounder."
        )
    cost = next(r for r in rows if r.name == "cost per call")
    if cost.verdict in ("lower", "higher"):
        less = "less" if cost.verdict == "lower" else "more"
        head += f" A call cost {abs(cost.difference):.0%} {less} with folding."
    return head


def compare_json(
    rows: list[Comparison], counts: dict[str, int], margin: float, seed: int
) -> dict[str, Any]:
    return {
        "sessions": counts,
        "margin": margin,
        "seed": seed,
        "measures": [
            {
                "measure": r.name.strip(),
                "treated": r.treated,
                "control": r.control,
                "difference": _finite(r.difference),
                "interval_95": [_finite(r.low), _finite(r.high)],
                "interval_90": [_finite(r.low90), _finite(r.high90)],
                "verdict": r.verdict,
                "outcome": r.outcome,
            }
            for r in rows
        ],
    }


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _money(value: float) -> str:
    return f"${money(value)}"


def _count(value: float) -> str:
    return short_count(value) if abs(value) >= 1000 else f"{value:.2f}"


def _share(value: float) -> str:
    if not math.isfinite(value):
        return "n/a"
    return f"{value:+.0%}"


def _interval(low: float, high: float) -> str:
    if not (math.isfinite(low) and math.isfinite(high)):
        return "(n/a)"
    return f"({low:+.0%}, {high:+.0%})"
