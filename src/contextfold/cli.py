"""The ``contextfold`` command line (typer + rich)."""

from __future__ import annotations

import json
import time
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape as rich_escape
from rich.progress import Progress
from rich.table import Table

from contextfold.bench.report import progress_bar
from contextfold.core.errors import ContextFoldError

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


@app.command()
def replay(
    paths: Annotated[list[Path], typer.Argument(help="Trajectory files or folders.")],
    strategy: StrategyOpt = ["full"],  # noqa: B006  (typer reads the default)
    model_profile: ProfileOpt = "qwen3-8b",
    budget: Annotated[int | None, typer.Option(help="Context budget in tokens.")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write results here.")] = None,
    tokenizer: TokenizerOpt = None,
    prices: PricesOpt = "default",
    hindsight: Annotated[
        bool, typer.Option("--hindsight", help="Add the hindsight bound (see the README).")
    ] = False,
) -> None:
    """Replay recorded trajectories through strategies and compare what each would send."""
    for path in paths:
        if not path.exists():
            _fail(f"{path} does not exist")
    _run_replay(
        paths, strategy, model_profile, budget, json_out, tokenizer, prices, hindsight=hindsight
    )


@app.command()
def demo(
    strategy: StrategyOpt = [],  # noqa: B006
    model_profile: ProfileOpt = "smollm2-135m",
) -> None:
    """Replay the sample trajectories that ship with contextfold through every strategy."""
    from contextfold.strategies.registry import STRATEGIES

    sample = Path(str(resources.files("contextfold") / "data"))
    _run_replay([sample], strategy or list(STRATEGIES), model_profile, None, None, None, "default")


@app.command()
def run(
    env: Annotated[
        str, typer.Option(help="tau2:airline|retail|telecom or tutorial:budget|study-plan")
    ],
    task: Annotated[str | None, typer.Option(help="Task id (tau2) or prompt (tutorial).")] = None,
    strategy: Annotated[str, typer.Option("--strategy", "-s", help="Strategy spec.")] = "refold",
    model: Annotated[str, typer.Option(help="local, or openai:MODEL with --base-url.")] = "local",
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible server URL.")] = None,
    max_steps: Annotated[int, typer.Option(help="Agent steps at most.")] = 30,
    budget: Annotated[int | None, typer.Option(help="Context budget in tokens.")] = None,
    threads: Annotated[int, typer.Option(help="CPU threads of the embedded engine.")] = 2,
    store: Annotated[Path | None, typer.Option(help="SQLite file keeping the session.")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write results here.")] = None,
) -> None:
    """Run one task live: transcript as it happens, then the reward and the meter."""
    from contextfold.bench.live import make_model, run_live
    from contextfold.core.counters import resolve_counter
    from contextfold.core.store import SQLiteStore

    try:
        counter = resolve_counter("smollm2" if model == "local" else "approx")
        sessions = SQLiteStore(store) if store is not None else None
        result = run_live(
            env,
            task,
            strategy,
            lambda: make_model(model, base_url=base_url, threads=threads),
            counter=counter,
            max_steps=max_steps,
            budget=budget,
            store=sessions,
            on_step=_print_step,
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
    if json_out is not None:
        json_out.write_text(json.dumps(summary, indent=1))
        console.print(f"wrote {json_out}")


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
    steps: Annotated[int, typer.Option(help="Steps in the scripted session.")] = 30,
    threads: Annotated[int, typer.Option(help="CPU threads for the embedded engine.")] = 2,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write results here.")] = None,
) -> None:
    """Play one scripted session through the embedded engine three ways (full, per-step
    re-rendering, refold's chunked rendering) and report prompt tokens evaluated vs reused."""
    from contextfold.bench.cache_bench import MODES, cache_bench
    from contextfold.core.counters import resolve_counter
    from contextfold.models import LocalModel

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
    if json_out is not None:
        json_out.write_text(json.dumps({r.mode: r.to_json() for r in results}, indent=1))
        console.print(f"wrote {json_out}")


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
def profiles() -> None:
    """List the model profiles (KV-cache shape, tokenizer)."""
    from contextfold.core.meter import PROFILES

    for p in PROFILES.values():
        console.print(
            f"[bold]{p.name}[/bold]  layers={p.layers} kv_heads={p.kv_heads} "
            f"head_dim={p.head_dim} bytes/token={p.kv_bytes_per_token:,} tokenizer={p.tokenizer}"
        )


def _run_replay(
    paths: list[Path],
    specs: list[str],
    profile_name: str,
    budget: int | None,
    json_out: Path | None,
    tokenizer: str | None,
    prices_name: str,
    *,
    hindsight: bool = False,
) -> None:
    from contextfold.bench.replay import replay as run
    from contextfold.bench.report import replay_table
    from contextfold.core.counters import resolve_counter
    from contextfold.core.meter import PRICE_TABLES, get_profile
    from contextfold.importers import iter_trajectories

    try:
        profile = get_profile(profile_name)
        counter = resolve_counter(tokenizer or profile.tokenizer)
        if prices_name not in PRICE_TABLES:
            _fail(f"unknown price table {prices_name!r}; known: {', '.join(PRICE_TABLES)}")
        start = time.perf_counter()
        items = list(iter_trajectories(paths))
        with _progress() as progress:
            task = progress.add_task("replaying", total=len(items))
            result = run(
                items,
                specs,
                counter=counter,
                profile=profile,
                prices=PRICE_TABLES[prices_name],
                budget=budget,
                on_trajectory=lambda _id: progress.advance(task),
                hindsight=hindsight,
            )
        wall = time.perf_counter() - start
    except ContextFoldError as exc:
        _fail(str(exc))
    title = f"replay: {len(items)} trajectories, profile {profile.name}, tokenizer {counter.name}"
    console.print(replay_table(result, title=title))
    console.print(f"wall time {wall:.2f} s (reading, counting, rendering, metering)")
    for label, res in result.strategies.items():
        for message in res.errors[:5]:
            err_console.print(f"[yellow]skipped ({label}):[/yellow] {message}", soft_wrap=True)
    for message in result.import_errors[:10]:
        err_console.print(f"[yellow]skipped:[/yellow] {message}", soft_wrap=True)
    if json_out is not None:
        json_out.write_text(json.dumps(result.to_json(), indent=1))
        console.print(f"wrote {json_out}")


def _progress() -> Progress:
    return progress_bar(err_console)


def _fail(message: str) -> NoReturn:
    err_console.print(f"[red]error:[/red] {message}", soft_wrap=True)
    raise typer.Exit(2)
