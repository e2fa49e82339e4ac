"""Replay a data set through many strategy specs and print one compact line per spec.

    .venv/bin/python benchmarks/replay_grid.py PATH [--spec SPEC ...] [--prices default]

Ratios (tokens, cost) are to ``full`` from the same run. Used to choose refold's defaults.
"""

from __future__ import annotations

import argparse

import replay_setup as setup

DEFAULT_SPECS = [
    "full",
    "mask",
    "refold",
    "refold mask=true",
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="+")
    setup.add_options(parser, many_prices=False)
    parser.add_argument("--budget", type=int, default=None)
    args = parser.parse_args()
    specs = setup.with_full(args.spec or DEFAULT_SPECS)
    done = setup.run(
        args.paths, specs, prices=args.prices, profile=args.profile, budget=args.budget
    )
    rows = done.summaries()
    base = rows["full"]
    columns = [
        *setup.cost_columns(base),
        setup.Column("unrec", 9, setup.value("unrecoverable_tokens", "d")),
        setup.Column("med ms", 7, setup.value("render_ms_median", ".3f")),
        setup.Column("p99 ms", 7, setup.value("render_ms_p99", ".3f")),
    ]
    done.show(columns, prices=args.prices)


if __name__ == "__main__":
    setup.main_or_error(main)
