"""The ``contextfold`` command line (typer + rich)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from contextfold.commands.common import (
    ThreadsOpt,
    check_args,
    console,
    fail,
    make_progress,
    ray_argv,
    save,
)
from contextfold.commands.demo import demo
from contextfold.commands.inspect import inspect
from contextfold.commands.live import run
from contextfold.commands.replay import replay
from contextfold.commands.serve import serve
from contextfold.commands.strategies import strategies
from contextfold.core.errors import ContextFoldError


class _App(typer.Typer):
    """The console entry point: a bare ``--ray`` becomes ``--ray local`` before parsing."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        sys.argv[1:] = ray_argv(sys.argv[1:])
        return super().__call__(*args, **kwargs)


app = _App(
    help="Context runtime for long-horizon LLM agents: replay, compare and run strategies.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.command()(replay)
app.command()(demo)
app.command()(run)
app.command()(serve)
app.command()(inspect)
app.command()(strategies)


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
        fail(str(exc))
    console.print(" ".join(ids), soft_wrap=True)


@app.command("cache-bench")
def cache_bench_cmd(
    steps: Annotated[int, typer.Option(min=2, help="Steps in the scripted session.")] = 30,
    threads: ThreadsOpt = 2,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write results here.")] = None,
) -> None:
    """Play one scripted session through the embedded engine three ways (full, per-step
    re-rendering, refold's chunked rendering) and report prompt tokens evaluated vs reused."""
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
        table.add_row(
            r.mode,
            f"{r.prompt_tokens:,}",
            f"{r.evaluated_tokens:,}",
            f"{r.prompt_tokens - r.evaluated_tokens:,}",
            f"{share:.1%}",
        )
    console.print(table)
    save(json_out, {r.mode: r.to_json() for r in results})


bench_app = typer.Typer(help="Benchmarks on live environments.", no_args_is_help=True)
app.add_typer(bench_app, name="bench")


def _register_bench() -> None:
    from contextfold.bench.sufficiency.command import sufficiency

    bench_app.command("sufficiency")(sufficiency)


_register_bench()


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
