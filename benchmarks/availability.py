"""Every landed strategy on the shared sets under every price table: tokens, cost with the
restores and re-runs priced, the restore and re-run calls, the argument-availability figures
and the multiple of the hindsight bound (issues 11, 29 and 37's closing notes, the docs'
results).

    .venv/bin/python benchmarks/availability.py [PATH ...] [--spec SPEC ...] [--prices NAME ...]
        [--no-restore-pricing] [--no-rerun-pricing]

PATH defaults to the three shared sets in ../shared/data (tau2-sierra, mini-swe-agent-dev,
swe-agent-coder-dev), one table each per price table; specs default to every registered
strategy that folds without a model; ratios are to ``full`` from the same run (``x bound``:
prompt tokens over the hindsight bound's). Restores and re-runs are priced as ``contextfold
replay`` prices them (:mod:`contextfold.bench.restores`, :mod:`contextfold.bench.reruns`)
unless ``--no-restore-pricing`` or ``--no-rerun-pricing``.
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

import replay_setup as setup

from contextfold.core.meter import PRICE_TABLES
from contextfold.strategies.registry import STRATEGIES, needs_folder

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SETS = [DATA / "tau2-sierra", DATA / "mini-swe-agent-dev", DATA / "swe-agent-coder-dev"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="*", type=Path, default=SETS)
    setup.add_options(parser, many_prices=True)
    parser.add_argument("--no-restore-pricing", dest="priced", action="store_false")
    parser.add_argument("--no-rerun-pricing", dest="reruns", action="store_false")
    args = parser.parse_args()
    specs = args.spec or [s for s in STRATEGIES if not needs_folder(s)]
    if not args.spec:  # a model-driven strategy needs its folder named: --spec "NAME folder=..."
        print("left out (they fold with a model; name one with --spec 'NAME folder=...'):")
        names = ", ".join(s for s in STRATEGIES if needs_folder(s))
        print(textwrap.fill(names, setup.WIDTH, initial_indent="  ", subsequent_indent="  "))
    for path in args.paths:
        for prices in args.prices or list(PRICE_TABLES):
            priced = {"price_restores": args.priced, "price_reruns": args.reruns}
            table(path, setup.with_full(specs), prices, args.profile, priced)


UNPRICED = {"restores": "price_restores", "re-runs": "price_reruns"}


def table(path: Path, specs: list[str], prices: str, profile: str, priced: dict[str, bool]) -> None:
    done = setup.run([path], specs, prices=prices, profile=profile, hindsight=True, **priced)
    rows = done.summaries()
    base, bound = rows["full"], rows["hindsight"]
    columns = [
        setup.Column("tokens", 6, setup.ratio("prompt_tokens", base)),
        setup.Column("cost", 6, setup.ratio("cost_usd", base)),
        setup.Column("restores", 8, setup.value("restores", "d")),
        setup.Column("reruns", 6, setup.value("reruns", "d")),
        setup.Column("needed", 6, setup.value("args_needed", "d")),
        setup.Column("in view", 7, setup.value("args_in_view", ".3f")),
        setup.Column("restor.", 7, setup.value("args_restorable", ".3f")),
        setup.Column("lost", 6, setup.value("args_lost", ".3f")),
        setup.Column("x bound", 7, setup.ratio("prompt_tokens", bound, 2)),
    ]
    print()
    unpriced = [what for what, key in UNPRICED.items() if not priced[key]]
    name = f"{path.name} ({' and '.join(unpriced)} not priced)" if unpriced else path.name
    done.show(columns, prices=prices, name=name)


if __name__ == "__main__":
    setup.main_or_error(main)
