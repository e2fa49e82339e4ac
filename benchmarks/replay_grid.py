"""Replay a data set through many strategy specs and print one compact line per spec.

    .venv/bin/python benchmarks/replay_grid.py PATH [--spec SPEC ...] [--prices default]

Ratios (tokens, cost) are to ``full`` from the same run. Used to choose refold's defaults.
"""

from __future__ import annotations

import argparse

from replay_setup import (
    Column,
    add_options,
    main_or_error,
    ratio,
    run,
    value,
    with_full,
)

DEFAULT_SPECS = [
    "full",
    "mask",
    "refold",
    "refold mask=true",
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="+")
    add_options(parser, many_prices=False)
    parser.add_argument("--budget", type=int, default=None)
    args = parser.parse_args()
    specs = with_full(args.spec or DEFAULT_SPECS)
    done = run(args.paths, specs, prices=args.prices, profile=args.profile, budget=args.budget)
    rows = done.summaries()
    base = rows["full"]
    columns = [
        Column("tokens", 7, ratio("prompt_tokens", base)),
        Column("cost", 6, ratio("cost_usd", base)),
        Column("reuse", 6, value("prefix_cache_reuse", ".3f")),
        Column("unrec", 9, value("unrecoverable_tokens", "d")),
        Column("med ms", 7, value("render_ms_median", ".3f")),
        Column("p99 ms", 7, value("render_ms_p99", ".3f")),
    ]
    done.show(columns, prices=args.prices)


if __name__ == "__main__":
    main_or_error(main)
