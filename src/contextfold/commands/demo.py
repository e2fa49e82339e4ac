"""``contextfold demo``: what contextfold is for, in under a minute.

The sample sessions that ship with the package are replayed through the main strategies (no
model: a fraction of a second), priced under both price tables, every column explained; then
the embedded model runs a short calculator task live, its tool calls shown as they happen; the
verdict (:mod:`contextfold.bench.verdict`) closes it. The replay uses ``replay``'s defaults
(model profile, tokenizer), so the same sample shows the same figures in both commands.
"""

from __future__ import annotations

import textwrap
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from contextfold.bench.report import money, short_count
from contextfold.commands.common import check_args, console, counter_note, fail
from contextfold.commands.demo_live import LIVE_STRATEGY, LIVE_TASK, live_line, live_part
from contextfold.commands.options import (
    ProfileOpt,
    StrategiesOpt,
    ThreadsOpt,
    resolve_counter_for,
    resolve_profile,
)
from contextfold.core.errors import ContextFoldError

if TYPE_CHECKING:
    from collections.abc import Callable

    from contextfold.bench.live import LiveResult
    from contextfold.bench.replay import ReplayResult

__all__ = ["DEMO_STRATEGIES", "LIVE_STRATEGY", "LIVE_TASK", "demo"]

DEMO_STRATEGIES = ["full", "window", "clip", "mask", "supersede", "refold"]
"""The demo's rows: the baseline, the classic cuts, and the restorable strategies."""
TABLES = ("default", "openai")
"""The price tables the replay is priced under; the verdict's cost-over-full line uses the first."""

_INTRO = (
    "[bold]contextfold[/bold] keeps an agent's history whole and, before every model call, "
    "lets a strategy render a smaller view of it; whatever a view leaves out is recorded with "
    "a way to get it back, if there is one.\n\n"
    "[bold]1. Replay[/bold] (no model): two recorded sessions, a tau2 airline conversation and "
    "a mini-swe-agent coding run, through the main strategies. [bold]full[/bold] sends "
    "everything every time: the baseline. `contextfold strategies` lists them all."
)


def demo(
    strategy: StrategiesOpt = [],  # noqa: B006  (typer reads the default)
    profile: ProfileOpt = None,
    live: Annotated[
        bool,
        typer.Option("--live/--no-live", help="After the replay, run the embedded model live."),
    ] = True,
    max_steps: Annotated[
        int, typer.Option(min=1, metavar="N", help="Agent steps of the live run at most.")
    ] = 8,
    threads: ThreadsOpt = 2,
) -> None:
    """Replay the bundled sample sessions, run the embedded model live, name the best.

    The samples go through the main strategies (no model, a second) under both price tables;
    then the embedded model runs a calculator task for a few steps; a verdict closes it.
    """
    specs = strategy or DEMO_STRATEGIES
    if "full" not in specs:
        specs = ["full", *specs]  # every figure is a ratio to it
    check_args(specs, None)
    try:
        results, title, counter = _replay(specs, profile)
    except ContextFoldError as exc:
        fail(str(exc))
    console.print(_INTRO, end="\n\n")
    console.print(_table(results, title))
    console.print()
    console.print(_legend())
    note = counter_note(counter, exact="replay --tokenizer")
    if note is not None:
        console.print(note, markup=False, highlight=False)
    outcome = live_part(max_steps, threads) if live else None
    _print_verdict(results, outcome)
    _print_next()


def _replay(specs: list[str], profile_name: str | None) -> tuple[dict[str, ReplayResult], str, str]:
    """The sample replayed once per price table (the same views; only the prices differ);
    the results, the table's title and the token counter's name."""
    from contextfold.bench.replay import replay
    from contextfold.core.meter import PRICE_TABLES
    from contextfold.importers import iter_trajectories
    from contextfold.strategies.folding import FolderSource

    profile = resolve_profile(profile_name)
    counter = resolve_counter_for(None, profile)
    sample = Path(str(resources.files("contextfold") / "data"))
    results = {
        table: replay(
            iter_trajectories([sample]),
            specs,
            counter=counter,
            profile=profile,
            prices=PRICE_TABLES[table],
            folders=FolderSource(default="scripted"),  # a -s compact works offline, for free
        )
        for table in TABLES
    }
    count = len(results[TABLES[0]].strategies["full"].rows)
    title = f"{count} sessions, profile {profile.name}, tokenizer {counter.name}"
    return results, title, counter.name


def _summaries(results: dict[str, ReplayResult]) -> dict[str, dict[str, dict[str, Any]]]:
    return {
        table: {label: res.summary() for label, res in result.strategies.items()}
        for table, result in results.items()
    }


def _table(results: dict[str, ReplayResult], title: str) -> Table:
    main, other = (_summaries(results)[t] for t in TABLES)
    table = Table(
        title=title, box=box.SIMPLE_HEAD, collapse_padding=True, pad_edge=False, show_edge=False
    )
    table.add_column("strategy", style="bold")
    for header in ("prompt tokens", "cost $", "openai $", "reuse", "removed", "unrecov."):
        table.add_column(header, justify="right", no_wrap=True)
    for label, s in main.items():
        table.add_row(
            escape(label),
            _with_ratio(main, label, "prompt_tokens", short_count),
            _with_ratio(main, label, "total_cost_usd", money),
            _with_ratio(other, label, "total_cost_usd", money),
            f"{s['prefix_cache_reuse']:.0%}",
            short_count(s["removed_tokens"]),
            short_count(s["unrecoverable_tokens"]),
        )
    return table


def _with_ratio(
    every: dict[str, dict[str, Any]], label: str, key: str, fmt: Callable[[float], str]
) -> str:
    value, base = every[label][key], every["full"][key]
    return f"{fmt(value)} [dim]{value / base:.2f}x[/dim]" if base else fmt(value)


def _legend() -> Table:
    from contextfold.core.meter import BLOCK_SIZE

    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    for column, meaning in (
        ("prompt tokens", "tokens sent to the model over all calls; Nx: ratio to full"),
        ("cost $", f"prompts and replies at the default prices: {_prices('default')}"),
        ("openai $", f"the same at OpenAI's: {_prices('openai')}"),
        (
            "reuse",
            "share of each prompt that repeats the previous prompt's start (whole blocks of "
            f"{BLOCK_SIZE} tokens): what a prefix cache serves",
        ),
        ("removed", "history tokens the views left out, summed over calls"),
        ("unrecov.", "removed tokens that no restore call brings back: lost for good"),
    ):
        grid.add_row(column, meaning)
    return grid


def _prices(name: str) -> str:
    from contextfold.core.meter import PRICE_TABLES

    p = PRICE_TABLES[name]
    write = f"writes {p.cache_write / p.input:g}x" if p.cache_write != p.input else "no write fee"
    return (
        f"${p.input:g}/M in, ${p.output:g}/M out, cache reads {p.cache_read / p.input:g}x, {write}"
    )


def _print_verdict(results: dict[str, ReplayResult], outcome: LiveResult | None) -> None:
    from contextfold.bench.verdict import verdict

    console.print("\n[bold]Verdict[/bold]")
    lines = verdict(_summaries(results))
    if outcome is not None:
        lines.append(live_line(outcome))
    for line in lines:  # a sentence a line, wrapped under its own dash
        text = textwrap.fill(line, width=79, initial_indent="- ", subsequent_indent="  ")
        console.print(escape(text), soft_wrap=True)


NEXT = (
    ("contextfold replay YOUR_RUNS/ -s full -s refold", "your own recorded runs"),
    ("contextfold serve --upstream URL", "the proxy, for any agent"),
    ("contextfold wrap claude", "Claude Code through the proxy"),
    ("contextfold savings", "what serve or wrap saved you"),
    ("contextfold inspect sessions.db", "call by call, what it saw"),
    ("make docs", "the documentation, in site/"),
)
"""What to try after the demo (its last lines): a command, what it is for."""


def _print_next() -> None:
    console.print("\n[bold]Next[/bold]")
    width = max(len(command) for command, _ in NEXT) + 2
    for command, what in NEXT:
        console.print(f"  {command:<{width}}{what}", markup=False, highlight=False)
    console.print(
        "  (wrap also runs codex and gemini; replay --help lists the formats it reads)",
        markup=False,
        highlight=False,
    )
