"""refold's settings against every model-free baseline, on a tuning half and a held-out half of
each set, under every price table: the frontier a user picks from (issue 37, item 4).

    .venv/bin/python benchmarks/refold_frontier.py [PATH ...] [--grid SPEC ...]
        [--prices NAME ...] [--json FILE]

Each set is split in two by a hash of the trajectory's id (``tuning`` and ``held-out``, fixed
across runs). Per set and table the table shows each spec's prompt tokens and cost (restores
and re-runs priced) as ratios to ``full`` on both halves; ``*`` marks the held-out frontier
(no other spec sends fewer tokens for less). Every refold spec runs with ``prices=`` the table
(its cost rule prices what the replay prices). Below each table: the refold setting that
costs least on the tuning half, its held-out figures, and the cheapest baseline's.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import replay_setup as setup

from contextfold.core.meter import PRICE_TABLES
from contextfold.strategies.registry import STRATEGIES, needs_folder

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SETS = [DATA / "mini-swe-agent-dev", DATA / "swe-agent-coder-dev", DATA / "tau2-sierra"]
GRID = ["refold", "refold keep_text=true", "refold window=2", "refold window=3"]
HALVES = ("tuning", "held-out")
Figures = dict[str, dict[str, dict[str, float]]]
"""half -> spec -> {"tokens": ratio to full, "cost": ratio to full}."""


def half_of(trajectory_id: str) -> str:
    """The half a trajectory belongs to: fixed by its id, about even."""
    return HALVES[hashlib.sha1(trajectory_id.encode()).digest()[0] % 2]


def priced(spec: str, prices: str) -> str:
    """A refold spec with its cost rule on ``prices`` (unless the spec names a table)."""
    if spec.split()[0] != "refold" or "prices=" in spec:
        return spec
    return f"{spec} prices={prices}"


def measure(path: Path, specs: Sequence[str], prices: str, profile: str) -> Figures:
    figures: Figures = {}
    for half in HALVES:
        done = setup.run(
            [path],
            [priced(s, prices) for s in specs],
            prices=prices,
            profile=profile,
            keep=lambda t, half=half: half_of(t.id) == half,
        )
        rows = done.summaries()
        base = rows[specs[0]]
        figures[half] = {
            spec: {
                "tokens": row["prompt_tokens"] / base["prompt_tokens"],
                "cost": row["total_cost_usd"] / base["total_cost_usd"],
                "restores": row["restores"],
                "reruns": row["reruns"],
                "unrecoverable": row["unrecoverable_tokens"],
            }
            for spec, row in zip(specs, rows.values(), strict=True)
        }
    return figures


def frontier(points: dict[str, dict[str, float]]) -> set[str]:
    """The specs no other spec beats on both tokens and cost."""

    def beaten(a: dict[str, float]) -> bool:
        return any(
            b["tokens"] <= a["tokens"] and b["cost"] <= a["cost"] and b != a
            for b in points.values()
        )

    return {spec for spec, point in points.items() if not beaten(point)}


def show(name: str, prices: str, figures: Figures) -> None:
    held = figures["held-out"]
    front = frontier(held)
    columns = [
        setup.Column("tune tok", 8, lambda s: f"{s['tune']['tokens']:.3f}"),
        setup.Column("tune $", 6, lambda s: f"{s['tune']['cost']:.3f}"),
        setup.Column("held tok", 8, lambda s: f"{s['held']['tokens']:.3f}"),
        setup.Column("held $", 6, lambda s: f"{s['held']['cost']:.3f}"),
        setup.Column("rest.", 5, lambda s: f"{s['held']['restores']:.0f}"),
        setup.Column("reruns", 6, lambda s: f"{s['held']['reruns']:.0f}"),
        setup.Column("", 1, lambda s: "*" if s["spec"] in front else ""),
    ]
    rows = {
        spec: {"spec": spec, "tune": figures["tuning"][spec], "held": held[spec]} for spec in held
    }
    print()
    setup.print_table(f"{name}, prices {prices} (ratios to full; * frontier)", rows, columns)
    print(verdict(figures))


def verdict(figures: Figures) -> str:
    """The refold setting cheapest on the tuning half, held out against the cheapest baseline."""
    tune, held = figures["tuning"], figures["held-out"]
    refolds = [s for s in tune if s.startswith("refold")]
    baselines = [s for s in tune if not s.startswith("refold") and s != "full"]
    pick = min(refolds, key=lambda s: tune[s]["cost"])
    rival = min(baselines, key=lambda s: held[s]["cost"])
    return (
        f"chosen on tuning: {pick}; held-out {held[pick]['tokens']:.3f} tokens, "
        f"{held[pick]['cost']:.3f} cost; cheapest baseline {rival}: {held[rival]['cost']:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="*", type=Path, default=SETS)
    setup.add_options(parser, many_prices=True)
    parser.add_argument("--grid", action="append", default=None, help="a refold spec to try")
    parser.add_argument("--json", type=Path, default=None, help="write every figure here")
    args = parser.parse_args()
    baselines = args.spec or [s for s in STRATEGIES if not needs_folder(s) and s != "refold"]
    specs = setup.with_full([*baselines, *(args.grid or GRID)])
    out: dict[str, dict[str, Any]] = {}
    for path in args.paths:
        for prices in args.prices or list(PRICE_TABLES):
            figures = measure(path, specs, prices, args.profile)
            show(path.name, prices, figures)
            out.setdefault(path.name, {})[prices] = figures
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    setup.main_or_error(main)
