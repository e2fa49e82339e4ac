"""Replay a data set through many strategy specs and print one compact line per spec.

    .venv/bin/python benchmarks/replay_grid.py PATH [--spec SPEC ...] [--prices default]

Ratios are to ``full`` from the same run. Used to choose refold's defaults.
"""

from __future__ import annotations

import argparse
import time

from contextfold.bench.replay import replay
from contextfold.core.counters import resolve_counter
from contextfold.core.meter import PRICE_TABLES, get_profile
from contextfold.importers import iter_trajectories

DEFAULT_SPECS = [
    "full",
    "mask",
    "refold",
    "refold mask=true",
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--spec", action="append", default=None)
    parser.add_argument("--prices", default="default")
    parser.add_argument("--profile", default="qwen3-8b")
    parser.add_argument("--budget", type=int, default=None)
    args = parser.parse_args()
    specs = args.spec or DEFAULT_SPECS
    if "full" not in specs:
        specs = ["full", *specs]
    profile = get_profile(args.profile)
    items = list(iter_trajectories(args.paths))
    start = time.perf_counter()
    result = replay(
        items,
        specs,
        counter=resolve_counter(profile.tokenizer),
        profile=profile,
        prices=PRICE_TABLES[args.prices],
        budget=args.budget,
    )
    wall = time.perf_counter() - start
    base = result.strategies["full"].summary()
    print(f"{len(items)} trajectories, prices {args.prices}, {wall:.1f} s")
    print(
        f"{'spec':58} {'tokens':>7} {'cost':>6} {'reuse':>6} {'unrec':>9} "
        f"{'med ms':>7} {'p99 ms':>7}"
    )
    for label, res in result.strategies.items():
        s = res.summary()
        print(
            f"{label:58} {s['prompt_tokens'] / base['prompt_tokens']:7.3f} "
            f"{s['cost_usd'] / base['cost_usd']:6.3f} {s['prefix_cache_reuse']:6.3f} "
            f"{s['unrecoverable_tokens']:9d} {s['render_ms_median']:7.3f} "
            f"{s['render_ms_p99']:7.3f}"
        )


if __name__ == "__main__":
    main()
