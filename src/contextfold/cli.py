"""The ``contextfold`` command line (typer + rich): the app, with every command registered
from :mod:`contextfold.commands`, one module a family."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from contextfold.commands.bench import bench_app, cache, cache_bench_alias, sufficiency
from contextfold.commands.common import Command, ray_argv
from contextfold.commands.demo import demo
from contextfold.commands.helpscreen import Group
from contextfold.commands.inspect import inspect
from contextfold.commands.listings import models, profiles, strategies
from contextfold.commands.live import run, tasks
from contextfold.commands.replay import replay
from contextfold.commands.replay_text import replay_epilog
from contextfold.commands.savings import SAVINGS_EPILOG, savings
from contextfold.commands.serve import SERVE_EPILOG, serve
from contextfold.commands.wrap import WRAP_EPILOG, WrapCommand, wrap

__all__ = ["app"]


class _App(typer.Typer):
    """The console entry point: a bare ``--ray`` becomes ``--ray local`` before parsing."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        sys.argv[1:] = ray_argv(sys.argv[1:])
        return super().__call__(*args, **kwargs)


def _version(shown: bool) -> None:
    if shown:
        from importlib.metadata import version

        typer.echo(f"contextfold {version('contextfold')}")
        raise typer.Exit()


app = _App(
    help="Context runtime for long-horizon LLM agents: replay, compare and run strategies.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    cls=Group,
)


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", is_eager=True, callback=_version, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Context runtime for long-horizon LLM agents: replay, compare and run strategies."""


EPILOGS = {replay: replay_epilog(), savings: SAVINGS_EPILOG, serve: SERVE_EPILOG}
"""Commands whose help closes with paragraphs of their own."""
for command in (replay, savings, demo, run, serve, inspect, strategies, tasks, models, profiles):
    app.command(cls=Command, epilog=EPILOGS.get(command))(command)
app.command(cls=WrapCommand, epilog=WRAP_EPILOG)(wrap)
bench_app.command("sufficiency", cls=Command)(sufficiency)
bench_app.command("cache", cls=Command)(cache)
app.add_typer(bench_app, name="bench")
app.command("cache-bench", cls=Command, hidden=True)(cache_bench_alias)
