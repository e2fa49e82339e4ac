"""What the replay benchmarks (``replay_grid.py``, ``availability.py``) share: their options,
the replay of a data set under one price table, and tables that fit 80 columns.

A table has a label column and fixed-width number columns; the label gets what the numbers
leave of 80 columns, and a longer label stands on a line of its own above its numbers.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contextfold.bench.replay import ReplayResult, replay
from contextfold.core.counters import resolve_counter
from contextfold.core.errors import ContextFoldError, ImportFormatError
from contextfold.core.meter import PRICE_TABLES, get_profile
from contextfold.importers import iter_trajectories
from contextfold.importers.base import Trajectory

WIDTH = 80
Summary = dict[str, Any]


def add_options(parser: argparse.ArgumentParser, *, many_prices: bool) -> None:
    """``--spec`` (repeatable), ``--prices`` (one table, or repeatable) and ``--profile``."""
    parser.add_argument("--spec", action="append", default=None, help="a strategy spec")
    if many_prices:
        parser.add_argument("--prices", action="append", default=None, choices=list(PRICE_TABLES))
    else:
        parser.add_argument("--prices", default="default", choices=list(PRICE_TABLES))
    parser.add_argument("--profile", default="qwen3-8b", help="the model profile")


def main_or_error(main: Callable[[], None]) -> None:
    """Run ``main``; a bad spec, path or price table is one line on stderr and exit status 1."""
    try:
        main()
    except ContextFoldError as exc:
        sys.exit(f"error: {exc}")


def with_full(specs: Sequence[str]) -> list[str]:
    """``specs`` with ``full`` first when missing (the ratios are to it)."""
    return list(specs) if "full" in specs else ["full", *specs]


@dataclass(frozen=True, slots=True)
class Run:
    trajectories: int
    result: ReplayResult
    seconds: float

    def summaries(self) -> dict[str, Summary]:
        return {label: res.summary() for label, res in self.result.strategies.items()}

    def show(self, columns: Sequence[Column], *, prices: str, name: str = "") -> None:
        """The table under ``[NAME: ]N trajectories, prices PRICES, S s``, then what was
        skipped (unreadable or malformed input), on stderr."""
        where = f"{name}: " if name else ""
        skipped = self.result.import_errors
        counts = f"{self.trajectories} trajectories" + (
            f", {len(skipped)} skipped" if skipped else ""
        )
        print_table(
            f"{where}{counts}, prices {prices}, {self.seconds:.1f} s", self.summaries(), columns
        )
        for error in skipped[:5]:
            print(f"skipped {error}", file=sys.stderr)


def run(
    paths: Sequence[str | Path],
    specs: Sequence[str],
    *,
    prices: str,
    profile: str,
    keep: Callable[[Trajectory], bool] | None = None,
    **options: Any,
) -> Run:
    """Replay every trajectory under ``paths`` (those ``keep`` accepts, if given) through
    ``specs`` (``options``: ``budget``, ``hindsight``, as
    :func:`~contextfold.bench.replay.replay` takes them)."""
    model = get_profile(profile)
    items = [
        item
        for item in iter_trajectories([str(p) for p in paths])
        if keep is None or isinstance(item, ImportFormatError) or keep(item)
    ]
    start = time.perf_counter()
    result = replay(
        items,
        specs,
        counter=resolve_counter(model.tokenizer),
        profile=model,
        prices=PRICE_TABLES[prices],
        **options,
    )
    read = sum(not isinstance(item, ImportFormatError) for item in items)
    return Run(read, result, time.perf_counter() - start)


@dataclass(frozen=True, slots=True)
class Column:
    header: str
    width: int
    cell: Callable[[Summary], str]
    """The cell of a row (its summary), already formatted to at most ``width`` characters."""


def ratio(key: str, base: Summary, digits: int = 3) -> Callable[[Summary], str]:
    """A row's ``key`` over ``base``'s."""
    return lambda s: f"{s[key] / base[key]:.{digits}f}" if base[key] else "-"


def value(key: str, spec: str) -> Callable[[Summary], str]:
    """A row's ``key`` formatted with ``spec``."""
    return lambda s: format(s[key], spec)


def cost_columns(base: Summary) -> list[Column]:
    """Prompt tokens and cost as ratios to ``base`` (``full``), and prefix-cache reuse."""
    return [
        Column("tokens", 7, ratio("prompt_tokens", base)),
        Column("cost", 6, ratio("cost_usd", base)),
        Column("reuse", 6, value("prefix_cache_reuse", ".3f")),
    ]


def print_table(title: str, rows: dict[str, Summary], columns: Sequence[Column]) -> None:
    """The rows under ``title``, one line each (two for a label too long for its column)."""
    cells = sum(c.width + 1 for c in columns)
    label = WIDTH - cells
    if label < 8:
        raise ValueError(f"the columns take {cells} of {WIDTH} characters")
    print(title)
    print(f"{'strategy':<{label}}" + "".join(f" {c.header:>{c.width}}" for c in columns))
    for name, summary in rows.items():
        numbers = "".join(f" {c.cell(summary):>{c.width}}" for c in columns)
        if len(name) > label:
            print(name)
            name = ""
        print(f"{name:<{label}}{numbers}")
