"""Every landed strategy on the shared sets under both price tables: tokens, cost, reuse, the
argument-availability figures and the multiple of the hindsight bound (issue 11's closing note).

    .venv/bin/python benchmarks/availability.py [PATH ...] [--spec SPEC ...] [--prices NAME ...]

PATH defaults to ../shared/data/tau2-sierra and ../shared/data/mini-swe-agent-dev, one table
each; specs default to every registered strategy that folds without a model; ratios are to
``full`` from the same run.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from contextfold.bench.replay import replay
from contextfold.core.counters import resolve_counter
from contextfold.core.meter import PRICE_TABLES, get_profile
from contextfold.importers import iter_trajectories
from contextfold.strategies.registry import STRATEGIES, needs_folder

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SETS = [DATA / "tau2-sierra", DATA / "mini-swe-agent-dev"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="*", type=Path, default=SETS)
    parser.add_argument("--spec", action="append", default=None)
    parser.add_argument("--prices", action="append", default=None, choices=list(PRICE_TABLES))
    parser.add_argument("--profile", default="qwen3-8b")
    args = parser.parse_args()
    specs = args.spec or [s for s in STRATEGIES if not needs_folder(s)]
    if not args.spec:  # a model-driven strategy needs its folder named: --spec "NAME folder=..."
        print("left out (they fold with a model; name one with --spec 'NAME folder=...'):")
        print("  " + ", ".join(s for s in STRATEGIES if needs_folder(s)))
    specs = specs if "full" in specs else ["full", *specs]
    for path in args.paths:
        for prices in args.prices or list(PRICE_TABLES):
            table(path, specs, prices, args.profile)


def table(path: Path, specs: list[str], prices: str, profile_name: str) -> None:
    profile = get_profile(profile_name)
    items = list(iter_trajectories([path]))
    start = time.perf_counter()
    result = replay(
        items,
        specs,
        counter=resolve_counter(profile.tokenizer),
        profile=profile,
        prices=PRICE_TABLES[prices],
        hindsight=True,
    )
    wall = time.perf_counter() - start
    rows = {label: res.summary() for label, res in result.strategies.items()}
    base, bound = rows["full"], rows["hindsight"]
    print(f"\n{path.name}: {len(items)} trajectories, prices {prices}, {wall:.1f} s")
    print(
        f"{'strategy':28} {'tokens':>7} {'cost':>6} {'reuse':>6} {'needed':>7} "
        f"{'in view':>8} {'restor.':>8} {'lost':>6} {'x bound':>8}"
    )
    for label, s in rows.items():
        print(
            f"{label:28} {s['prompt_tokens'] / base['prompt_tokens']:7.3f} "
            f"{s['cost_usd'] / base['cost_usd']:6.3f} {s['prefix_cache_reuse']:6.3f} "
            f"{s['args_needed']:7d} {s['args_in_view']:8.3f} {s['args_restorable']:8.3f} "
            f"{s['args_lost']:6.3f} {s['prompt_tokens'] / bound['prompt_tokens']:8.2f}"
        )


if __name__ == "__main__":
    main()
