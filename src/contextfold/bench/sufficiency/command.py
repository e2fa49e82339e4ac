"""``contextfold bench sufficiency``: the typer command (registered in :mod:`contextfold.cli`).

Imports only typer and rich at module level; the benchmark itself is imported when it runs.
"""

from __future__ import annotations

import time
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from contextfold.bench.args import check_specs, check_writable
from contextfold.bench.output import save_json
from contextfold.bench.report import WIDE, WIDE_FOLDED, progress_bar
from contextfold.commands.common import ExperienceOpt, LearnOpt, RayOpt, ToolSchemasOpt
from contextfold.core.errors import ContextFoldError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from contextfold.bench.sufficiency.runner import FolderChoice, RunResult, Setting
    from contextfold.core.experience import Experience

__all__ = ["sufficiency", "sufficiency_table"]

FOLDED_WIDE = WIDE_FOLDED + 10
"""Width from which the table shows every measure when strategies folded (and the width of
logs): the replay table's, plus the lost-value columns."""

console = Console()
err_console = Console(stderr=True)


def sufficiency(
    domain: Annotated[str, typer.Option(help="tau2 domain: airline, retail or telecom.")],
    strategy: Annotated[
        list[str],
        typer.Option("--strategy", "-s", help="Strategy name, 'name key=value', path or YAML."),
    ] = ["full"],  # noqa: B006  (typer reads the default)
    budget: Annotated[
        list[int],
        typer.Option(min=1, help="Context budget in tokens (repeat it); none: unlimited."),
    ] = [],  # noqa: B006
    noisy: Annotated[bool, typer.Option("--noisy", help="Pad tool outputs (noisy mode).")] = False,
    both: Annotated[bool, typer.Option("--both", help="Run normal and noisy mode.")] = False,
    tasks: Annotated[int | None, typer.Option(min=1, help="Only the first N tasks.")] = None,
    task: Annotated[list[str], typer.Option("--task", help="Only these task ids.")] = [],  # noqa: B006
    workers: Annotated[
        int, typer.Option(min=1, help="Processes, or Ray tasks at once (tasks run in parallel).")
    ] = 2,
    ray: RayOpt = None,
    learn: LearnOpt = False,
    experience: ExperienceOpt = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the rows here.")] = None,
    runs_out: Annotated[
        Path | None,
        typer.Option("--runs", help="Write every run (one task under one setting) here."),
    ] = None,
    plot: Annotated[Path | None, typer.Option(help="Draw context tokens per step (PNG).")] = None,
    folder: Annotated[
        str | None,
        typer.Option(
            help="Folder of strategies that fold with a model: local, openai:NAME, scripted."
        ),
    ] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible server URL.")] = None,
    fold_cache: Annotated[Path | None, typer.Option(help="Fold cache file.")] = None,
    no_fold_cache: Annotated[bool, typer.Option("--no-fold-cache")] = False,
    threads: Annotated[int, typer.Option(min=1, help="CPU threads of an embedded folder.")] = 2,
    tool_schemas: ToolSchemasOpt = False,
) -> None:
    """Does a folded context still hold what the next action needs? A context-dependent oracle
    on tau2 tasks, per strategy x budget x mode: reward, redundant calls, lost values (from the
    user, from tools) and re-fetched ones, tokens, cost."""
    from contextfold.bench.sufficiency.runner import FolderChoice, Setting, aggregate, result_json
    from contextfold.core.experience_file import load_experiences
    from contextfold.strategies.folding import default_cache_path

    cache = None if no_fold_cache else str(fold_cache or default_cache_path())
    choice = FolderChoice(folder, base_url, cache, threads)
    modes = [False, True] if both else [noisy]
    budgets: list[int | None] = [*budget] or [None]
    settings = [Setting(s, b, m, tool_schemas) for s in strategy for b in budgets for m in modes]
    try:
        check_specs(strategy)
        check_writable(json_out)
        check_writable(runs_out, option="--runs")
        check_writable(plot, option="--plot")
        if learn and ray:
            raise ContextFoldError(
                "--learn runs the tasks in order, in one process: not with --ray"
            )
        start = load_experiences(experience) if experience is not None else {}
        procs = 1 if learn else workers
        results, wall = _run(domain, settings, task, tasks, procs, choice, ray, (learn, start))
        if plot is not None:
            from contextfold.bench.sufficiency.plot import plot_context

            plot_context(results, plot, title=f"{domain}: context tokens per step")
    except ContextFoldError as exc:
        err_console.print(f"[red]error:[/red] {exc}", soft_wrap=True)
        raise typer.Exit(2) from exc
    rows = aggregate(results)
    count = len({r.task_id for r in results})
    wide = console if console.is_terminal else Console(width=FOLDED_WIDE)  # logs: all of it
    title = f"sufficiency: {domain}, {count} tasks"
    wide.print(sufficiency_table(rows, results, title=title, width=wide.width))
    console.print(f"wall time {wall:.1f} s")
    _print_failures(results)
    if json_out is not None and not save_json(json_out, rows, out=console, err=err_console):
        raise typer.Exit(1)
    if runs_out is not None:
        runs = [result_json(r) for r in results]
        if not save_json(runs_out, runs, out=console, err=err_console):
            raise typer.Exit(1)
    if plot is not None:
        console.print(f"wrote {plot}")


def _run(
    domain: str,
    settings: list[Setting],
    only: list[str],
    first: int | None,
    workers: int,
    folder: FolderChoice,
    ray: str | None = None,
    learning: tuple[bool, Mapping[str, Experience]] = (False, {}),
) -> tuple[list[RunResult], float]:
    """Run the matrix over the domain's scorable tasks with a progress bar; results and wall
    time in seconds."""
    from contextfold.bench.cluster import ray_sweep
    from contextfold.bench.sufficiency.runner import run_matrix
    from contextfold.envs.tau2 import list_tasks

    scorable = list_tasks(domain, model_free=True)
    ids = [t for t in scorable if not only or t in only][:first]
    console.print(
        f"{domain}: {len(scorable)} of {len(list_tasks(domain))} tasks are scored without a "
        f"model; running {len(ids)} x {len(settings)} settings on {workers} "
        + (f"Ray tasks at once (cluster {ray})" if ray else "processes")
        + (", learning across tasks in order" if learning[0] else "")
    )
    start = time.perf_counter()
    with ExitStack() as stack:
        sweep = stack.enter_context(ray_sweep(ray, workers=workers)) if ray else None
        progress = stack.enter_context(_progress())
        bar = progress.add_task(domain, total=len(ids))
        results = run_matrix(
            domain,
            ids,
            settings,
            workers=workers,
            on_task=lambda _: progress.advance(bar),
            folder=folder,
            sweep=sweep,
            learn=learning[0],
            experience=learning[1],
        )
    return results, time.perf_counter() - start


NARROW = ("strategy", "budget", "mode", "reward", "redundant", "prompt tok", "total $")
"""The columns that fit 80 columns; a terminal of :data:`~contextfold.bench.report.WIDE`
columns or more shows them all."""


def sufficiency_table(
    rows: list[dict[str, object]], results: list[RunResult], *, title: str, width: int = 80
) -> Table:
    """A row per setting; below :data:`~contextfold.bench.report.WIDE` columns (more when a
    strategy folded with a model) only the :data:`NARROW` columns, so it fits ``width``."""
    wide = _wide_table(rows, results, title=title)
    folded = any(float(str(row.get("fold_calls", 0))) for row in rows)
    if width >= (FOLDED_WIDE if folded else WIDE):
        return wide
    keep = [i for i, column in enumerate(wide.columns) if column.header in NARROW]
    table = Table(title=title, box=box.SIMPLE_HEAD, collapse_padding=True)
    table.caption = f"a terminal of {FOLDED_WIDE if folded else WIDE}+ columns shows every measure"
    for i in keep:
        header = str(wide.columns[i].header)
        if header == "strategy":
            table.add_column(header, overflow="fold")
        else:
            table.add_column(header, justify="right", no_wrap=True)
    cells = [list(wide.columns[i].cells) for i in keep]
    for row in zip(*cells, strict=True):
        table.add_row(*row)
    return table


def _wide_table(rows: list[dict[str, object]], results: list[RunResult], *, title: str) -> Table:
    table = Table(title=title, box=box.SIMPLE_HEAD, collapse_padding=True)
    heads = ["strategy", "budget", "mode", "tasks", "reward", "redundant"]
    heads += ["lost\nuser", "lost\ntool", "re-\nfetch", "steps"]
    heads += ["prompt tok", "peak ctx", "forced", "cost $", "fold $", "total $", "rejected"]
    heads += ["over budget", "skipped"]
    for head in heads:
        table.add_column(head, justify="left" if head == "strategy" else "right")
    for row in rows:
        runs = [
            r
            for r in results
            if (r.setting.strategy, r.setting.budget, r.setting.noisy)
            == (row["strategy"], row["budget"], row["noisy"])
        ]
        table.add_row(
            escape(str(row["strategy"])),
            str(row["budget"] or "-"),
            "noisy" if row["noisy"] else "normal",
            str(row["tasks"]),
            f"{row['reward_mean']:.3f}",
            f"{row['redundant_calls']:.2f}",
            f"{row['lost_user_values']:.2f}",
            f"{row['lost_tool_values']:.2f}",
            f"{row['refetched_values']:.2f}",
            f"{row['steps']:.1f}",
            f"{row['prompt_tokens']:,.0f}",
            f"{row['peak_context_tokens']:,.0f}",
            f"{row['forced_compactions']:.2f}",
            f"{row['cost_usd']:.4f}",
            f"{row['fold_cost_usd']:.4f}",
            f"{row['total_cost_usd']:.4f}",
            f"{row['fold_rejected']:.2f}",
            str(sum(r.error is not None for r in runs)),
            str(sum(len(r.skipped) for r in runs)),
        )
    return table


def _print_failures(results: list[RunResult], limit: int = 10) -> None:
    """The first runs that scored below 1, and why (skipped actions, untold items, errors)."""
    failed = [r for r in results if r.reward < 1.0]
    for r in failed[:limit]:
        s = r.setting
        why = r.error or f"skipped {r.skipped or 'nothing'}, untold {r.untold or 'nothing'}"
        console.print(
            f"[yellow]reward {r.reward:.0f}[/yellow] {s.strategy} budget={s.budget} "
            f"{'noisy' if s.noisy else 'normal'} task {r.task_id}: {why}",
            soft_wrap=True,
        )
    if len(failed) > limit:
        console.print(f"... and {len(failed) - limit} more runs below reward 1")


def _progress() -> Progress:
    return progress_bar(err_console)
