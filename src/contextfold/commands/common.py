"""What the command modules share: consoles, option types, checks, saving, failing."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.progress import Progress

from contextfold.bench.args import check_specs, check_writable
from contextfold.bench.output import save_json
from contextfold.bench.report import progress_bar
from contextfold.core.errors import ContextFoldError

__all__ = [
    "DEFAULT_PROFILE",
    "LOCAL_RAY",
    "BaseUrlOpt",
    "BudgetOpt",
    "ExperienceOpt",
    "FoldCacheOpt",
    "FolderOpt",
    "LearnOpt",
    "NoFoldCacheOpt",
    "PricesOpt",
    "ProfileOpt",
    "RayOpt",
    "StrategyOpt",
    "ThreadsOpt",
    "TokenizerOpt",
    "ToolSchemasOpt",
    "check_args",
    "console",
    "err_console",
    "fail",
    "make_progress",
    "print_skipped",
    "ray_argv",
    "save",
]

console = Console()
err_console = Console(stderr=True)

StrategyOpt = Annotated[
    list[str],
    typer.Option("--strategy", "-s", help="Strategy name, 'name key=value', dotted path or YAML."),
]
DEFAULT_PROFILE = "qwen3-8b"
"""The model profile of ``replay`` and ``demo`` unless ``--model-profile`` names another."""
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
ThreadsOpt = Annotated[
    int, typer.Option(min=1, help="CPU threads of the embedded engine (1 on a busy machine).")
]
BudgetOpt = Annotated[int | None, typer.Option(min=1, help="Context budget in tokens.")]


def check_args(specs: list[str], json_out: Path | None) -> None:
    """What can be checked before any work: strategy specs are not blank, --json is writable."""
    try:
        check_specs(specs)
        check_writable(json_out)
    except ContextFoldError as exc:
        fail(str(exc))


def save(path: Path | None, data: Any) -> None:
    if path is not None and not save_json(path, data, out=console, err=err_console):
        raise typer.Exit(1)


def make_progress() -> Progress:
    return progress_bar(err_console)


def fail(message: str) -> NoReturn:
    err_console.print(f"[red]error:[/red] {message}", soft_wrap=True)
    raise typer.Exit(2)


def print_skipped(messages: list[str], limit: int, label: str) -> None:
    for message in messages[:limit]:
        err_console.print(f"[yellow]{label}:[/yellow] {message}", soft_wrap=True)
    if len(messages) > limit:
        more = len(messages) - limit
        err_console.print(f"[yellow]{label}:[/yellow] ... and {more} more (all in --json)")


RayOpt = Annotated[
    str | None,
    typer.Option(
        help="Fan the work out as Ray tasks: on the cluster at ADDRESS (host:6379, "
        "ray://host:10001, auto), or on a local cluster with --ray alone (or --ray local).",
        metavar="[ADDRESS]",
    ),
]

ToolSchemasOpt = Annotated[
    bool,
    typer.Option(
        "--tool-schemas",
        help="Count each strategy's own tool schemas (restore, recall) in every prompt, as a "
        "deployment sends them; full offers none.",
    ),
]
LearnOpt = Annotated[
    bool,
    typer.Option(
        "--learn",
        help="Strategies that bet on the calls to come (refold, carryon, ufold) learn from the "
        "sessions that ended before: one experience per strategy, sessions in order.",
    ),
]

ExperienceOpt = Annotated[
    Path | None,
    typer.Option(
        "--experience",
        help="Start each strategy from what the runs saved with --save-experience taught it "
        "(frozen unless --learn; matched by strategy label).",
    ),
]


LOCAL_RAY = "local"
"""The ``--ray`` value that starts a local Ray cluster (what a bare ``--ray`` means)."""


def ray_argv(argv: list[str]) -> list[str]:
    """A bare ``--ray`` (last, or before another option or an existing path) gets the value
    ``local``: click cannot make an option's value optional before positional arguments."""
    out: list[str] = []
    for i, arg in enumerate(argv):
        out.append(arg)
        if arg != "--ray":
            continue
        following = argv[i + 1] if i + 1 < len(argv) else None
        if following is None or following.startswith("-") or Path(following).exists():
            out.append(LOCAL_RAY)
    return out
