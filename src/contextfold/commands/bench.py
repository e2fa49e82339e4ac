"""``contextfold bench``: the benchmarks. ``bench sufficiency`` (the tau2 oracle: does a folded
context still hold what the next action needs?) and ``bench cache`` (a real engine's prefix
cache under each way of rendering one session)."""

from __future__ import annotations

import time
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from contextfold.commands.common import (
    check_args,
    console,
    err_console,
    fail,
    folder_choice,
    load_experience,
    make_progress,
    save,
)
from contextfold.commands.helpscreen import Group
from contextfold.commands.options import (
    DEFAULT_PRICES,
    BaseUrlOpt,
    ExperienceOpt,
    FoldCacheOpt,
    FolderOpt,
    JsonOpt,
    LearnOpt,
    NoFoldCacheOpt,
    PricesOpt,
    ProfileOpt,
    RayOpt,
    SaveExperienceOpt,
    StrategiesOpt,
    ThreadsOpt,
    TokenizerOpt,
    ToolSchemasOpt,
    resolve_prices,
    resolve_profile,
)
from contextfold.core.errors import ContextFoldError

if TYPE_CHECKING:
    from contextfold.bench.cluster import FolderChoice
    from contextfold.bench.sufficiency.runner import Metering, RunResult, Setting
    from contextfold.core.experience import Experience

__all__ = ["bench_app", "cache", "sufficiency"]

bench_app = typer.Typer(
    help="Benchmarks: tau2 sufficiency, a real engine's prefix cache.",
    no_args_is_help=True,
    cls=Group,
)


def sufficiency(
    domain: Annotated[
        str, typer.Option(metavar="DOMAIN", help="tau2 domain: airline, retail or telecom.")
    ],
    strategy: StrategiesOpt = ["full"],  # noqa: B006  (typer reads the default)
    budget: Annotated[
        list[int],
        typer.Option(
            min=1, metavar="TOKENS", help="Context budget in tokens; repeat it (default: none)."
        ),
    ] = [],  # noqa: B006
    noisy: Annotated[bool, typer.Option("--noisy", help="Pad tool outputs (noisy mode).")] = False,
    both: Annotated[bool, typer.Option("--both", help="Run normal and noisy mode.")] = False,
    tasks: Annotated[
        int | None, typer.Option(min=1, metavar="N", help="Only the first N tasks.")
    ] = None,
    task: Annotated[
        list[str], typer.Option("--task", metavar="ID", help="Only this task; repeat it.")
    ] = [],  # noqa: B006
    workers: Annotated[
        int,
        typer.Option(min=1, metavar="N", help="Processes, or Ray tasks, running tasks at once."),
    ] = 2,
    ray: RayOpt = None,
    learn: LearnOpt = False,
    experience: ExperienceOpt = None,
    save_experience: SaveExperienceOpt = None,
    json_out: JsonOpt = None,
    runs_out: Annotated[
        Path | None,
        typer.Option(
            "--runs", metavar="PATH", help="Write every run (a task under a setting) here."
        ),
    ] = None,
    plot: Annotated[
        Path | None, typer.Option(metavar="PATH", help="Draw context tokens per step (PNG).")
    ] = None,
    profile: ProfileOpt = None,
    tokenizer: TokenizerOpt = None,
    prices: PricesOpt = DEFAULT_PRICES,
    folder: FolderOpt = None,
    base_url: BaseUrlOpt = None,
    fold_cache: FoldCacheOpt = None,
    no_fold_cache: NoFoldCacheOpt = False,
    threads: ThreadsOpt = 2,
    tool_schemas: ToolSchemasOpt = False,
) -> None:
    """Does a folded context still hold what the next action needs? (tau2, no model)

    A context-dependent oracle on tau2 tasks, per strategy x budget x mode: reward, redundant
    calls, lost values (from the user, from tools) and re-fetched ones, tokens, cost.
    """
    from contextfold.bench.sufficiency.runner import Setting, aggregate

    check_args(strategy, json_out)
    _check_sufficiency(budget, both, learn, ray, save_experience, runs_out, plot)
    start = load_experience(experience, save_experience)
    modes = [False, True] if both else [noisy]
    budgets: list[int | None] = [*budget] or [None]
    settings = [Setting(s, b, m, tool_schemas) for s in strategy for b in budgets for m in modes]
    choice = folder_choice(folder, base_url, fold_cache, no_fold_cache, threads)
    learned: dict[Setting, Experience] = {}
    try:
        metering = _metering(profile, tokenizer, prices)
        matrix = (domain, settings, task, tasks, 1 if learn else workers)
        results, wall = _run(*matrix, choice, metering, ray, (learn, start, learned))
        if plot is not None:
            from contextfold.bench.sufficiency.plot import plot_context

            plot_context(results, plot, title=f"{domain}: context tokens per step")
    except ContextFoldError as exc:
        fail(str(exc))
    rows = aggregate(results)
    _report(domain, rows, results, wall, prices)
    if save_experience is not None:
        _save_learned(save_experience, learned)
    save(json_out, rows)
    if runs_out is not None:
        from contextfold.bench.sufficiency.runner import result_json

        save(runs_out, [result_json(r) for r in results])
    if plot is not None:
        console.print(f"wrote {plot}", soft_wrap=True, markup=False)


def _check_sufficiency(
    budgets: list[int],
    both: bool,
    learn: bool,
    ray: str | None,
    save_experience: Path | None,
    *outputs: Path | None,
) -> None:
    """What can be refused before any work, as one line each."""
    from contextfold.bench.args import check_writable

    if learn and ray:
        fail("--learn runs the tasks in order, in one process: not with --ray")
    if save_experience is not None and not learn:
        fail("--save-experience needs --learn (without it nothing is learned)")
    if save_experience is not None and (len(budgets) > 1 or both):
        fail(
            "--save-experience keeps one experience per strategy: give one --budget at most "
            "and one mode (not --both)"
        )
    try:
        for path, option in zip(outputs, ("--runs", "--plot"), strict=True):
            check_writable(path, option=option)
    except ContextFoldError as exc:
        fail(str(exc))


def _metering(profile: str | None, tokenizer: str | None, prices: str) -> Metering:
    from contextfold.bench.sufficiency.runner import Metering

    resolve_prices(prices)  # an unknown table fails here, by name
    chosen = resolve_profile(profile)
    return Metering(tokenizer or chosen.tokenizer, prices, chosen.name)


def _run(
    domain: str,
    settings: list[Setting],
    only: list[str],
    first: int | None,
    workers: int,
    folder: FolderChoice,
    metering: Metering,
    ray: str | None,
    learning: tuple[bool, dict[str, Experience], dict[Setting, Experience]],
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
        progress = stack.enter_context(make_progress())
        # each process's first task also loads the domain's environment: the longest wait
        bar = progress.add_task(f"{domain}: first tasks, loading tau2", total=len(ids))
        results = run_matrix(
            domain,
            ids,
            settings,
            workers=workers,
            on_task=lambda _: progress.update(bar, advance=1, description=domain),
            folder=folder,
            sweep=sweep,
            learn=learning[0],
            experience=learning[1],
            learned=learning[2],
            metering=metering,
        )
    return results, time.perf_counter() - start


def _report(
    domain: str, rows: list[dict[str, object]], results: list[RunResult], wall: float, prices: str
) -> None:
    """The table (whole in a log: a terminal shows what fits), the wall time, the failures."""
    from contextfold.bench.sufficiency.table import FOLDED_WIDE, sufficiency_table

    count = len({r.task_id for r in results})
    wide = console if console.is_terminal else Console(width=FOLDED_WIDE)
    title = f"sufficiency: {domain}, {count} tasks, {prices} prices"
    wide.print(sufficiency_table(rows, results, title=title, width=wide.width))
    console.print(f"wall time {wall:.1f} s")
    _print_failures(results)


def _save_learned(path: Path, learned: dict[Setting, Experience]) -> None:
    from contextfold.core.experience_file import save_experiences
    from contextfold.strategies.registry import spec_label

    taught = {spec_label(s.strategy): e for s, e in learned.items() if e.lengths}
    save_experiences(path, taught)
    console.print(f"wrote {path} (what each strategy learned)", soft_wrap=True, markup=False)


def _print_failures(results: list[RunResult], limit: int = 10) -> None:
    """The first runs that scored below 1, and why (skipped actions, untold items, errors)."""
    failed = [r for r in results if r.reward < 1.0]
    for r in failed[:limit]:
        s = r.setting
        why = r.error or f"skipped {r.skipped or 'nothing'}, untold {r.untold or 'nothing'}"
        console.print(
            f"[yellow]reward {r.reward:.0f}[/yellow] "
            + escape(
                f"{s.strategy} budget={s.budget} {'noisy' if s.noisy else 'normal'} "
                f"task {r.task_id}: {why}"
            ),
            soft_wrap=True,
        )
    if len(failed) > limit:
        console.print(f"... and {len(failed) - limit} more runs below reward 1")


def cache(
    steps: Annotated[
        int, typer.Option(min=2, metavar="N", help="Steps in the scripted session.")
    ] = 30,
    threads: ThreadsOpt = 2,
    json_out: JsonOpt = None,
) -> None:
    """A real engine's prefix cache: one session rendered four ways, tokens evaluated.

    One scripted coding session goes through the embedded engine four ways (full history,
    refold's operators re-rendered every step, the same operators chunked, refold's defaults);
    the table gives the prompt tokens the engine evaluated and reused per way.
    """
    from contextfold.bench.cache_bench import MODES, cache_bench
    from contextfold.core.counters import resolve_counter
    from contextfold.models import LocalModel

    check_args([], json_out)
    try:
        counter = resolve_counter("smollm2")
        with make_progress() as progress:
            task = progress.add_task("calls", total=len(MODES) * (steps - 1))
            results = cache_bench(
                lambda: LocalModel(n_threads=threads),
                counter,
                steps=steps,
                on_call=lambda _mode, _n: progress.advance(task),
            )
    except ContextFoldError as exc:
        fail(str(exc))
    table = Table(title=f"prefix cache on the embedded engine: {steps}-step session")
    for column in ("mode", "prompt tokens", "evaluated", "reused", "evaluated share"):
        table.add_column(column, justify="right")
    for r in results:
        share = r.evaluated_tokens / r.prompt_tokens if r.prompt_tokens else 0.0
        reused = r.prompt_tokens - r.evaluated_tokens
        row = (r.prompt_tokens, r.evaluated_tokens, reused)
        table.add_row(r.mode, *(f"{n:,}" for n in row), f"{share:.1%}")
    console.print(table)
    save(json_out, {r.mode: r.to_json() for r in results})


def cache_bench_alias(
    steps: Annotated[
        int, typer.Option(min=2, metavar="N", help="Steps in the scripted session.")
    ] = 30,
    threads: ThreadsOpt = 2,
    json_out: JsonOpt = None,
) -> None:
    """The old name of ``contextfold bench cache``, kept until 0.2."""
    err_console.print("[yellow]warning:[/yellow] cache-bench is now `contextfold bench cache`")
    cache(steps=steps, threads=threads, json_out=json_out)
