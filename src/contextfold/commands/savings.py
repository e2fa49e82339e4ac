"""``contextfold savings``: what folding saved on the user's own sessions (serve's or wrap's
ledger, or a replay's output), and with ``--compare`` the treated sessions beside the control
group (see :mod:`contextfold.savings`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from contextfold.commands.common import console, fail
from contextfold.commands.options import JsonOpt
from contextfold.core.errors import ContextFoldError

if TYPE_CHECKING:
    from contextfold.savings import Source

__all__ = ["SAVINGS_EPILOG", "savings"]

COMPARE = "Comparing the arms (--compare)"
SAVINGS_EPILOG = (
    "wrap's store: ~/.local/share/contextfold/sessions.db. A replay's JSON: replay -s full "
    "-s refold --json FILE (--strategy picks the one set against full).\n\nMore: "
    "docs/guides/savings.md; every option: docs/reference/cli.md."
)


def savings(
    source: Annotated[
        str | None,
        typer.Argument(
            metavar="SOURCE",
            help="serve's or wrap's store (a sessions.db or a postgresql:// URL), or the JSON "
            "a replay wrote (default: wrap's store).",
            show_default=False,
        ),
    ] = None,
    strategy: Annotated[
        str | None,
        typer.Option(metavar="SPEC", help="With a replay's JSON: the strategy set against full."),
    ] = None,
    compare: Annotated[
        bool,
        typer.Option(
            "--compare",
            help="Treated sessions against the control group (serve --control).",
            rich_help_panel=COMPARE,
        ),
    ] = False,
    margin: Annotated[
        float,
        typer.Option(
            min=0.001,
            max=1.0,
            metavar="SHARE",
            help="Relative difference within which an outcome counts as equivalent.",
            rich_help_panel=COMPARE,
        ),
    ] = 0.1,
    seed: Annotated[
        int, typer.Option(metavar="N", help="The bootstrap's seed.", rich_help_panel=COMPARE)
    ] = 0,
    plot: Annotated[
        Path | None,
        typer.Option(metavar="PATH", help="Draw each session's bill beside direct (PNG)."),
    ] = None,
    json_out: JsonOpt = None,
) -> None:
    """Show what contextfold saved on your sessions, per session and in total.

    What the upstream billed, what the same conversations would have cost sent direct
    (estimated), what was saved in dollars and prompt tokens, and the restores and their cost.
    Reads serve's or wrap's store (each upstream call is in its ledger) or a replay's JSON
    output."""
    from contextfold.bench.args import check_writable
    from contextfold.commands.wrap import default_home
    from contextfold.savings import load_source

    target = source or str(default_home() / "sessions.db")
    if source is None and not Path(target).exists():
        fail(f"no store at {target} (wrap's): give serve's store, a postgresql:// URL or a JSON")
    try:
        check_writable(json_out)
        check_writable(plot, option="--plot")
        found = load_source(target, strategy=strategy)
    except ContextFoldError as exc:
        fail(str(exc))
    if not found.sessions:
        fail(f"{found.name} holds no session to report (no upstream call in its ledger yet)")
    if compare and found.kind != "store":
        fail("--compare reads a store whose proxy ran with --control; a replay has no arms")
    _report(found, compare, margin, seed, plot, json_out)


def _report(
    found: Source, compare: bool, margin: float, seed: int, plot: Path | None, out: Path | None
) -> None:
    from contextfold.commands.common import save
    from contextfold.savings.report import savings_json, savings_table

    console.print(savings_table(found))
    data = savings_json(found)
    if compare:
        data["compare"] = _compare(found, margin, seed)
    if plot is not None:
        from contextfold.savings.plot import plot_savings

        try:
            plot_savings(found, plot)
        except ContextFoldError as exc:
            fail(str(exc))
        console.print(f"wrote {plot}", soft_wrap=True, markup=False)
    save(out, data)


def _compare(found: Source, margin: float, seed: int) -> dict[str, object]:
    from contextfold.savings.compare import compare, units
    from contextfold.savings.verdict import compare_json, compare_table, in_words

    counted = units(found.entries)
    counts = {arm: sum(u.arm == arm for u in counted) for arm in ("treated", "control")}
    if min(counts.values()) < 2:
        fail(
            f"--compare needs at least 2 sessions in each arm; the ledger has "
            f"{counts['treated']} treated and {counts['control']} control: run serve with "
            "--control 0.1 (or more) for longer"
        )
    rows = compare(found.entries, margin=margin, seed=seed)
    console.print(compare_table(rows, counts, margin))
    console.print(in_words(rows, margin), soft_wrap=False)
    return compare_json(rows, counts, margin, seed)
