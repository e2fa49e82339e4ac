"""``contextfold replay``: recorded runs through strategies."""

from __future__ import annotations

import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from contextfold.bench.output import plural
from contextfold.commands.common import (
    check_args,
    console,
    counter_note,
    err_console,
    fail,
    folder_choice,
    load_experience,
    make_progress,
    print_skipped,
    save,
)
from contextfold.commands.options import (
    DEFAULT_PRICES,
    METERING,
    RAY,
    BaseUrlOpt,
    BudgetOpt,
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
    resolve_counter_for,
    resolve_prices,
    resolve_profile,
)
from contextfold.commands.replay_text import nothing_replayed
from contextfold.core.errors import ContextFoldError
from contextfold.core.store.opening import is_postgres_url

if TYPE_CHECKING:
    from contextfold.bench.cluster import FolderChoice, RaySweep
    from contextfold.bench.replay import ReplayResult
    from contextfold.core.experience import Experience
    from contextfold.core.folds import FoldRecord
    from contextfold.strategies.folding import FolderSource

__all__ = ["replay"]

RESTORES = "Restores and re-runs (priced by default)"


def replay(
    paths: Annotated[
        list[str],
        typer.Argument(
            metavar="PATH...", help="Trajectory files or folders, or a store's postgresql:// URL."
        ),
    ],
    strategy: StrategiesOpt = ["full"],  # noqa: B006  (typer reads the default)
    profile: ProfileOpt = None,
    budget: BudgetOpt = None,
    json_out: JsonOpt = None,
    tokenizer: TokenizerOpt = None,
    prices: PricesOpt = DEFAULT_PRICES,
    folder: FolderOpt = None,
    base_url: BaseUrlOpt = None,
    limit: Annotated[
        int | None,
        typer.Option(metavar="N", help="Only the first N trajectories of each path."),
    ] = None,
    fold_cache: FoldCacheOpt = None,
    no_fold_cache: NoFoldCacheOpt = False,
    hindsight: Annotated[
        bool,
        typer.Option(
            "--hindsight",
            help="Add the hindsight bound: the smallest views that lose nothing a later call "
            "takes.",
            rich_help_panel=METERING,
        ),
    ] = False,
    threads: ThreadsOpt = 2,
    learn: LearnOpt = False,
    experience: ExperienceOpt = None,
    save_experience: SaveExperienceOpt = None,
    ray: RayOpt = None,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            metavar="N",
            help="With --ray: Ray tasks at once (default: the cluster's CPUs).",
            rich_help_panel=RAY,
        ),
    ] = None,
    tool_schemas: ToolSchemasOpt = False,
    by_source: Annotated[
        bool, typer.Option("--by-source", help="Also one table per file read.")
    ] = False,
    restore_pricing: Annotated[
        bool,
        typer.Option(
            "--restore-pricing/--no-restore-pricing",
            help="Price a restore of what a call needs and its view left out.",
            rich_help_panel=RESTORES,
        ),
    ] = True,
    rerun_pricing: Annotated[
        bool,
        typer.Option(
            "--rerun-pricing/--no-rerun-pricing",
            help="Price a re-run of a tool whose output the view lost.",
            rich_help_panel=RESTORES,
        ),
    ] = True,
) -> None:
    """Replay recorded trajectories through strategies and compare what each would send."""
    for path in paths:
        if not is_postgres_url(path) and not Path(path).exists():
            fail(f"{path} does not exist")
    if limit is not None and limit < 1:
        fail(f"--limit must be at least 1, got {limit}")
    if workers is not None and ray is None:
        fail("--workers needs --ray (replay runs in one process otherwise)")
    if learn and ray is not None:
        fail("--learn replays the sessions in order, in one process: not with --ray")
    if save_experience is not None and not learn:
        fail("--save-experience needs --learn (without it nothing is learned)")
    check_args(strategy, json_out)
    start = load_experience(experience, save_experience)
    options = _ReplayOptions(
        budget,
        tokenizer,
        prices,
        limit,
        hindsight,
        ray,
        workers,
        learn,
        tool_schemas,
        by_source,
        restore_pricing,
        rerun_pricing,
    )
    choice = folder_choice(folder, base_url, fold_cache, no_fold_cache, threads)
    try:
        folders = choice.source()
    except ContextFoldError as exc:
        fail(str(exc))
    _run_replay(
        paths, strategy, profile, json_out, options, folders, choice, (start, save_experience)
    )


@dataclass(frozen=True, slots=True)
class _ReplayOptions:
    budget: int | None
    tokenizer: str | None
    prices: str
    limit: int | None
    hindsight: bool
    ray: str | None
    workers: int | None
    learn: bool
    tool_schemas: bool
    by_source: bool
    restore_pricing: bool = True
    rerun_pricing: bool = True


def _read(paths: list[str], limit: int | None) -> list[Any]:
    """The trajectories (and import errors) of every path; at most ``limit`` of each."""
    from contextfold.importers import Trajectory, iter_trajectories

    items: list[Any] = []
    for path in paths:
        taken = 0
        for item in iter_trajectories([path]):
            if isinstance(item, Trajectory):
                if limit is not None and taken >= limit:
                    break
                taken += 1
            items.append(item)
    return items


def _run_replay(
    paths: list[str],
    specs: list[str],
    profile_name: str | None,
    json_out: Path | None,
    options: _ReplayOptions,
    folders: FolderSource,
    choice: FolderChoice | None = None,
    experience: tuple[dict[str, Experience], Path | None] = ({}, None),
) -> None:
    from contextfold.bench.replay import replay as run
    from contextfold.bench.report import replay_table

    try:
        profile = resolve_profile(profile_name)
        counter = resolve_counter_for(options.tokenizer, profile)
        prices = resolve_prices(options.prices)
        start = time.perf_counter()
        items = _read(paths, options.limit)
        with ExitStack() as stack:
            sweep = _sweep(stack, options)
            progress = stack.enter_context(make_progress())
            task = progress.add_task("replaying", total=len(items))
            folds = [0]

            def on_fold(record: FoldRecord) -> None:
                folds[0] += len(record.calls)
                progress.update(task, description=f"replaying ({folds[0]} folder calls)")

            result = run(
                items,
                specs,
                counter=counter,
                profile=profile,
                prices=prices,
                budget=options.budget,
                on_trajectory=lambda _id: progress.advance(task),
                folders=folders,
                on_fold=on_fold,
                hindsight=options.hindsight,
                sweep=sweep,
                folder_choice=choice,
                learn=options.learn,
                experience=experience[0],
                tool_schemas=options.tool_schemas,
                price_restores=options.restore_pricing,
                price_reruns=options.rerun_pricing,
            )
        wall = time.perf_counter() - start
    except ContextFoldError as exc:
        fail(str(exc))
    _require_replayed(paths, result, json_out)
    read = plural(len(items) - len(result.import_errors), "trajectory", "trajectories")
    title = f"replay: {read}, profile {profile.name}, tokenizer {counter.name}"
    console.print(replay_table(result, title=title, width=console.width))
    if result.bills:
        from contextfold.bench.billed_report import billed_table

        console.print(billed_table(result))
    note = counter_note(counter.name)
    if note is not None:
        console.print(note, markup=False, highlight=False)
    if options.by_source:
        _print_by_source(result)
    console.print(f"wall time {wall:.2f} s (reading, counting, folding, rendering, metering)")
    if options.learn:
        console.print("--learn: each trajectory's strategies learned from those before it")
    if experience[1] is not None:
        from contextfold.core.experience_file import save_experiences

        learned = {k: e for k, e in result.experiences.items() if e.lengths}
        save_experiences(experience[1], learned)
        console.print(
            f"wrote {experience[1]} (what each strategy learned)", soft_wrap=True, markup=False
        )
    for label, res in result.strategies.items():
        print_skipped(res.errors, 5, f"skipped ({label})")
    print_skipped(result.import_errors, 10, "skipped")
    save(json_out, result.to_json())


def _print_by_source(result: ReplayResult) -> None:
    """One table per file read, titled by its name (``--by-source``)."""
    from contextfold.bench.report import replay_table

    for source, part in result.by_source().items():
        count = max(len(res.rows) for res in part.strategies.values())
        title = f"{Path(source).name}: {plural(count, 'trajectory', 'trajectories')}"
        console.print(replay_table(part, title=title, width=console.width, caption=False))


def _sweep(stack: ExitStack, options: _ReplayOptions) -> RaySweep | None:
    if options.ray is None:
        return None
    from contextfold.bench.cluster import ray_sweep

    return stack.enter_context(ray_sweep(options.ray, workers=options.workers))


def _require_replayed(paths: list[str], result: Any, json_out: Path | None) -> None:
    """Exit 1 (after naming what was skipped) when no trajectory could be replayed."""
    if any(res.rows for res in result.strategies.values()):
        return
    print_skipped(result.import_errors, 10, "skipped")
    save(json_out, result.to_json())
    said = nothing_replayed(paths, len(result.import_errors))
    err_console.print(f"[red]error:[/red] {escape(said)}", soft_wrap=True)
    raise typer.Exit(1)
