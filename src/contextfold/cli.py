"""The ``contextfold`` command line (typer + rich)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape as rich_escape
from rich.progress import Progress
from rich.table import Table

from contextfold.bench.args import check_specs, check_writable
from contextfold.bench.output import plural, save_json
from contextfold.bench.report import progress_bar
from contextfold.core.errors import ContextFoldError

if TYPE_CHECKING:
    from contextfold.core.folds import FoldRecord
    from contextfold.core.protocols import Model
    from contextfold.strategies.folding import FolderSource

app = typer.Typer(
    help="Context runtime for long-horizon LLM agents: replay, compare and run strategies.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
console = Console()
err_console = Console(stderr=True)

StrategyOpt = Annotated[
    list[str],
    typer.Option("--strategy", "-s", help="Strategy name, 'name key=value', dotted path or YAML."),
]
ProfileOpt = Annotated[
    str, typer.Option("--model-profile", "-m", help="KV-cache shape and tokenizer of the model.")
]
TokenizerOpt = Annotated[
    str | None,
    typer.Option(
        help="Token counter: approx, smollm2, PATH.gguf or PATH/tokenizer.json. "
        "Default: the profile's own."
    ),
]
PricesOpt = Annotated[str, typer.Option(help="Price table: default (CarryOn's) or openai.")]
FolderOpt = Annotated[
    str | None,
    typer.Option(
        help="Folder model of strategies that fold with one and name none: local, "
        "openai:NAME (with --base-url), scripted, or agent (live runs)."
    ),
]
BaseUrlOpt = Annotated[str | None, typer.Option(help="OpenAI-compatible server URL.")]
FoldCacheOpt = Annotated[
    Path | None,
    typer.Option(help="Fold cache file (default: ~/.cache/contextfold/folds.sqlite)."),
]
NoFoldCacheOpt = Annotated[
    bool, typer.Option("--no-fold-cache", help="Call the folder even for inputs seen before.")
]
BudgetOpt = Annotated[int | None, typer.Option(min=1, help="Context budget in tokens.")]


@app.command()
def replay(
    paths: Annotated[list[Path], typer.Argument(help="Trajectory files or folders.")],
    strategy: StrategyOpt = ["full"],  # noqa: B006  (typer reads the default)
    model_profile: ProfileOpt = "qwen3-8b",
    budget: BudgetOpt = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write results here.")] = None,
    tokenizer: TokenizerOpt = None,
    prices: PricesOpt = "default",
    folder: FolderOpt = None,
    base_url: BaseUrlOpt = None,
    limit: Annotated[
        int | None, typer.Option(help="Only the first N trajectories of each path.")
    ] = None,
    fold_cache: FoldCacheOpt = None,
    no_fold_cache: NoFoldCacheOpt = False,
) -> None:
    """Replay recorded trajectories through strategies and compare what each would send."""
    for path in paths:
        if not path.exists():
            _fail(f"{path} does not exist")
    if limit is not None and limit < 1:
        _fail(f"--limit must be at least 1, got {limit}")
    _check_args(strategy, json_out)
    options = _ReplayOptions(budget, tokenizer, prices, limit)
    try:
        folders = _folders(folder, base_url, fold_cache, no_fold_cache)
    except ContextFoldError as exc:
        _fail(str(exc))
    _run_replay(paths, strategy, model_profile, json_out, options, folders)


@app.command()
def demo(
    strategy: StrategyOpt = [],  # noqa: B006
    model_profile: ProfileOpt = "smollm2-135m",
) -> None:
    """Replay the sample trajectories that ship with contextfold through the main strategies."""
    sample = Path(str(resources.files("contextfold") / "data"))
    _demo_intro()
    options = _ReplayOptions(None, None, "default", None)
    folders = _folders("scripted", None, None, True)  # a -s compact works offline, for free
    _run_replay([sample], strategy or DEMO_STRATEGIES, model_profile, None, options, folders)


DEMO_STRATEGIES = ["full", "window", "clip", "mask", "supersede", "refold"]
"""The demo's rows: the baseline, the classic cuts, and the restorable strategies."""


def _demo_intro() -> None:
    console.print(
        "[bold]contextfold[/bold] keeps an agent's history whole and, before every model call, "
        "lets a strategy render a smaller view of it. Below: two recorded sessions (a tau2 "
        "airline conversation, a mini-swe-agent coding run) replayed through the main "
        "strategies; [bold]prompt tokens[/bold] is what each would resend and [bold]cost[/bold] "
        "what it would pay with cache reads and writes priced, both as ratios to [bold]full[/bold] "
        "(keep everything). `contextfold strategies` lists all of them.",
        soft_wrap=False,
    )


@app.command()
def run(
    env: Annotated[
        str, typer.Option(help="tau2:airline|retail|telecom or tutorial:budget|study-plan")
    ],
    task: Annotated[str | None, typer.Option(help="Task id (tau2) or prompt (tutorial).")] = None,
    strategy: Annotated[str, typer.Option("--strategy", "-s", help="Strategy spec.")] = "refold",
    model: Annotated[str, typer.Option(help="local, or openai:MODEL with --base-url.")] = "local",
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible server URL.")] = None,
    max_steps: Annotated[int, typer.Option(min=1, help="Agent steps at most.")] = 30,
    budget: BudgetOpt = None,
    threads: Annotated[int, typer.Option(help="CPU threads of the embedded engine.")] = 2,
    store: Annotated[Path | None, typer.Option(help="SQLite file keeping the session.")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write results here.")] = None,
    folder: FolderOpt = "agent",
    session: Annotated[
        str | None, typer.Option(help="Session id in the store (default: unique per run).")
    ] = None,
    resume: Annotated[
        str | None,
        typer.Option(help="Continue the stored session ID (after a crash); needs --store."),
    ] = None,
) -> None:
    """Run one task live: transcript as it happens, then the reward and the meter."""
    from contextfold.bench.live import make_model, run_live
    from contextfold.core.counters import resolve_counter
    from contextfold.strategies.folding import FolderSource

    _check_args([strategy], json_out)
    try:
        sessions, session = _open_session(store, session, resume, env, task)
        counter = resolve_counter("smollm2" if model == "local" else "approx")

        def make() -> Model:
            return make_model(model, base_url=base_url, threads=threads)

        folders = FolderSource(
            default=folder, agent=make, agent_spec=model, base_url=base_url, threads=threads
        )
        result = run_live(
            env,
            task,
            strategy,
            make,
            counter=counter,
            max_steps=max_steps,
            budget=budget,
            store=sessions,
            on_step=_print_step,
            folders=folders,
            session=session,
            resume=resume is not None,
        )
    except ContextFoldError as exc:
        _fail(str(exc))
    summary = result.summary()
    table = Table(title=f"{result.env} task {result.task}, strategy {strategy}, model {model}")
    table.add_column("measure", style="bold")
    table.add_column("value", justify="right")
    for key, value in summary.items():
        table.add_row(key, f"{value:,.4f}" if isinstance(value, float) else str(value))
    console.print(table)
    if store is not None:
        console.print(f"session {session} in {store}")
    _save(json_out, summary)


def _open_session(
    path: Path | None, session: str | None, resume: str | None, env: str, task: str | None
) -> tuple[Any, str]:
    """The store (or None) and the session id to write: given, resumed or new."""
    from contextfold.bench.live import new_session_id
    from contextfold.core.store import SQLiteStore

    if resume is not None and (path is None or session not in (None, resume)):
        _fail("--resume ID needs --store (the file that holds the session) and no other --session")
    if path is None:
        return None, session or new_session_id(env, task)
    store = SQLiteStore(path)
    chosen = resume or session or new_session_id(env, task)
    known = store.list_sessions()
    if resume is not None and resume not in known:
        _fail(f"no session {resume!r} in {path}; its sessions: {', '.join(known) or 'none'}")
    if resume is None and chosen in known:
        _fail(f"session {chosen!r} already exists in {path}; continue it with --resume {chosen}")
    verb = "continuing" if resume else "recording"
    err_console.print(f"{verb} session {chosen} in {path} (after a crash: --resume {chosen})")
    return store, chosen


def _print_step(step: Any) -> None:
    for message in step.messages:
        role = message.role
        text = (message.content or "").strip()
        calls = getattr(message, "tool_calls", ())
        style = {"user": "cyan", "assistant": "green", "tool": "dim"}.get(role, "")
        line = text if len(text) <= 300 else text[:300] + " …"
        console.print(f"[{style}][{step.index}] {role}:[/{style}] {rich_escape(line)}")
        for call in calls:
            console.print(
                f"[{style}]    -> {call.name}({rich_escape(call.arguments[:200])})[/{style}]"
            )


@app.command()
def tasks(
    domain: Annotated[str, typer.Argument(help="airline, retail or telecom.")],
    all_splits: Annotated[bool, typer.Option("--all", help="Every split, not only base.")] = False,
) -> None:
    """List the tau2 task ids of a domain that the evaluator scores without a model."""
    from contextfold.envs.tau2 import list_tasks

    try:
        ids = list_tasks(domain, split=None if all_splits else "base", model_free=True)
    except ContextFoldError as exc:
        _fail(str(exc))
    console.print(" ".join(ids), soft_wrap=True)


@app.command("cache-bench")
def cache_bench_cmd(
    steps: Annotated[int, typer.Option(min=2, help="Steps in the scripted session.")] = 30,
    threads: Annotated[int, typer.Option(min=1, help="CPU threads for the embedded engine.")] = 2,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write results here.")] = None,
) -> None:
    """Play one scripted session through the embedded engine three ways (full, per-step
    re-rendering, refold's chunked rendering) and report prompt tokens evaluated vs reused."""
    from contextfold.bench.cache_bench import MODES, cache_bench
    from contextfold.core.counters import resolve_counter
    from contextfold.models import LocalModel

    _check_args([], json_out)
    try:
        counter = resolve_counter("smollm2")
        with _progress() as progress:
            task = progress.add_task("calls", total=len(MODES) * (steps - 1))
            results = cache_bench(
                lambda: LocalModel(n_threads=threads),
                counter,
                steps=steps,
                on_call=lambda _mode, _n: progress.advance(task),
            )
    except ContextFoldError as exc:
        _fail(str(exc))
    table = Table(title=f"prefix cache on the embedded engine: {steps}-step session")
    for column in ("mode", "prompt tokens", "evaluated", "reused", "evaluated share"):
        table.add_column(column, justify="right")
    for r in results:
        share = r.evaluated_tokens / r.prompt_tokens if r.prompt_tokens else 0.0
        table.add_row(
            r.mode,
            f"{r.prompt_tokens:,}",
            f"{r.evaluated_tokens:,}",
            f"{r.prompt_tokens - r.evaluated_tokens:,}",
            f"{share:.1%}",
        )
    console.print(table)
    _save(json_out, {r.mode: r.to_json() for r in results})


bench_app = typer.Typer(help="Benchmarks on live environments.", no_args_is_help=True)
app.add_typer(bench_app, name="bench")


def _register_bench() -> None:
    from contextfold.bench.sufficiency.command import sufficiency

    bench_app.command("sufficiency")(sufficiency)


_register_bench()


@app.command()
def strategies() -> None:
    """List the strategies that can be named by a short name."""
    from contextfold.strategies.registry import STRATEGIES

    for name, path in STRATEGIES.items():
        console.print(f"[bold]{name}[/bold]  {path}")


@app.command()
def models() -> None:
    """List the model specs a --model or --folder option accepts."""
    from contextfold.models.registry import MODELS

    for entry in MODELS.values():
        spec = "openai:NAME" if entry.name == "openai" else entry.name
        console.print(
            f"[bold]{spec}[/bold]  {entry.description}; context {entry.context_tokens:,} tokens"
        )
    console.print("[bold]agent[/bold]  (as a folder) the agent's own model, with its own engine")


@app.command()
def profiles() -> None:
    """List the model profiles (KV-cache shape, tokenizer)."""
    from contextfold.core.meter import PROFILES

    for p in PROFILES.values():
        console.print(
            f"[bold]{p.name}[/bold]  layers={p.layers} kv_heads={p.kv_heads} "
            f"head_dim={p.head_dim} bytes/token={p.kv_bytes_per_token:,} tokenizer={p.tokenizer}"
        )


@dataclass(frozen=True, slots=True)
class _ReplayOptions:
    budget: int | None
    tokenizer: str | None
    prices: str
    limit: int | None


def _folders(
    folder: str | None, base_url: str | None, cache: Path | None, no_cache: bool
) -> FolderSource:
    """The folder source of a batch command (replay, bench): ``--folder``, the fold cache."""
    from contextfold.strategies.folding import FoldCache, FolderSource

    fold_cache = None if no_cache else FoldCache(cache)
    return FolderSource(default=folder, base_url=base_url, cache=fold_cache)


def _read(paths: list[Path], limit: int | None) -> list[Any]:
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
    paths: list[Path],
    specs: list[str],
    profile_name: str,
    json_out: Path | None,
    options: _ReplayOptions,
    folders: FolderSource,
) -> None:
    from contextfold.bench.replay import replay as run
    from contextfold.bench.report import replay_table
    from contextfold.core.counters import resolve_counter
    from contextfold.core.meter import PRICE_TABLES, get_profile

    prices_name = options.prices
    try:
        profile = get_profile(profile_name)
        counter = resolve_counter(options.tokenizer or profile.tokenizer)
        if prices_name not in PRICE_TABLES:
            _fail(f"unknown price table {prices_name!r}; known: {', '.join(PRICE_TABLES)}")
        start = time.perf_counter()
        items = _read(paths, options.limit)
        with _progress() as progress:
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
                prices=PRICE_TABLES[prices_name],
                budget=options.budget,
                on_trajectory=lambda _id: progress.advance(task),
                folders=folders,
                on_fold=on_fold,
            )
        wall = time.perf_counter() - start
    except ContextFoldError as exc:
        _fail(str(exc))
    _require_replayed(paths, result, json_out)
    read = plural(len(items) - len(result.import_errors), "trajectory", "trajectories")
    title = f"replay: {read}, profile {profile.name}, tokenizer {counter.name}"
    console.print(replay_table(result, title=title, width=console.width))
    console.print(f"wall time {wall:.2f} s (reading, counting, folding, rendering, metering)")
    for label, res in result.strategies.items():
        _print_skipped(res.errors, 5, f"skipped ({label})")
    _print_skipped(result.import_errors, 10, "skipped")
    _save(json_out, result.to_json())


def _check_args(specs: list[str], json_out: Path | None) -> None:
    """What can be checked before any work: strategy specs are not blank, --json is writable."""
    try:
        check_specs(specs)
        check_writable(json_out)
    except ContextFoldError as exc:
        _fail(str(exc))


def _require_replayed(paths: list[Path], result: Any, json_out: Path | None) -> None:
    """Exit 1 (after naming what was skipped) when no trajectory could be replayed."""
    if any(res.rows for res in result.strategies.values()):
        return
    _print_skipped(result.import_errors, 10, "skipped")
    _save(json_out, result.to_json())
    where = ", ".join(str(p) for p in paths)
    skipped = len(result.import_errors)
    why = f"{skipped} skipped, see above" if skipped else "no .json or .jsonl file found"
    err_console.print(
        f"[red]error:[/red] no trajectories to replay in {where} ({why}); give files in a "
        "supported format (see `contextfold replay --help`)",
        soft_wrap=True,
    )
    raise typer.Exit(1)


def _print_skipped(messages: list[str], limit: int, label: str) -> None:
    for message in messages[:limit]:
        err_console.print(f"[yellow]{label}:[/yellow] {message}", soft_wrap=True)
    if len(messages) > limit:
        more = len(messages) - limit
        err_console.print(f"[yellow]{label}:[/yellow] ... and {more} more (all in --json)")


def _save(path: Path | None, data: Any) -> None:
    if path is not None and not save_json(path, data, out=console, err=err_console):
        raise typer.Exit(1)


def _progress() -> Progress:
    return progress_bar(err_console)


def _fail(message: str) -> NoReturn:
    err_console.print(f"[red]error:[/red] {message}", soft_wrap=True)
    raise typer.Exit(2)
