"""Every landed strategy on the shared sets under both price tables: tokens, cost with the
restores priced, the restore calls, the argument-availability figures and the multiple of the
hindsight bound (issues 11 and 29's closing notes, the docs' results).

    .venv/bin/python benchmarks/availability.py [PATH ...] [--spec SPEC ...] [--prices NAME ...]
        [--no-restore-pricing]

PATH defaults to ../shared/data/tau2-sierra and ../shared/data/mini-swe-agent-dev, one table
each; specs default to every registered strategy that folds without a model; ratios are to
``full`` from the same run (``x bound``: prompt tokens over the hindsight bound's). Restores
are priced as ``contextfold replay`` prices them (:mod:`contextfold.bench.restores`) unless
``--no-restore-pricing``.
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

import replay_setup as setup

from contextfold.core.meter import PRICE_TABLES
from contextfold.strategies.registry import STRATEGIES, needs_folder

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SETS = [DATA / "tau2-sierra", DATA / "mini-swe-agent-dev"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="*", type=Path, default=SETS)
    setup.add_options(parser, many_prices=True)
    parser.add_argument("--no-restore-pricing", dest="priced", action="store_false")
    args = parser.parse_args()
    specs = args.spec or [s for s in STRATEGIES if not needs_folder(s)]
    if not args.spec:  # a model-driven strategy needs its folder named: --spec "NAME folder=..."
        print("left out (they fold with a model; name one with --spec 'NAME folder=...'):")
        names = ", ".join(s for s in STRATEGIES if needs_folder(s))
        print(textwrap.fill(names, setup.WIDTH, initial_indent="  ", subsequent_indent="  "))
    for path in args.paths:
        for prices in args.prices or list(PRICE_TABLES):
            table(path, setup.with_full(specs), prices, args.profile, priced=args.priced)


def table(path: Path, specs: list[str], prices: str, profile: str, *, priced: bool) -> None:
    done = setup.run(
        [path], specs, prices=prices, profile=profile, hindsight=True, price_restores=priced
    )
    rows = done.summaries()
    base, bound = rows["full"], rows["hindsight"]
    columns = [
        setup.Column("tokens", 6, setup.ratio("prompt_tokens", base)),
        setup.Column("cost", 6, setup.ratio("cost_usd", base)),
        setup.Column("restores", 8, setup.value("restores", "d")),
        setup.Column("needed", 6, setup.value("args_needed", "d")),
        setup.Column("in view", 7, setup.value("args_in_view", ".3f")),
        setup.Column("restor.", 7, setup.value("args_restorable", ".3f")),
        setup.Column("lost", 6, setup.value("args_lost", ".3f")),
        setup.Column("x bound", 7, setup.ratio("prompt_tokens", bound, 2)),
    ]
    print()
    name = path.name if priced else f"{path.name} (restores not priced)"
    done.show(columns, prices=prices, name=name)


if __name__ == "__main__":
    setup.main_or_error(main)
