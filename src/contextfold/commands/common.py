"""What the command modules share besides options (:mod:`.options`): the consoles, the
command class that still parses old spellings, checks made before any work, saving, failing.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress
from typer.core import TyperCommand

from contextfold.bench.args import check_specs, check_writable
from contextfold.bench.output import save_json
from contextfold.bench.report import progress_bar
from contextfold.commands.helpscreen import PlainHelp
from contextfold.commands.options import ALIASES, LOCAL_RAY, REMOVED_IN
from contextfold.core.errors import ContextFoldError

if TYPE_CHECKING:
    from contextfold.bench.cluster import FolderChoice
    from contextfold.core.experience import Experience

__all__ = [
    "APPROX",
    "Command",
    "check_args",
    "console",
    "counter_note",
    "err_console",
    "fail",
    "folder_choice",
    "load_experience",
    "make_progress",
    "print_skipped",
    "ray_argv",
    "respell",
    "save",
]

console = Console()
err_console = Console(stderr=True)

APPROX = "approx-4cpt"
"""The name of the default token counter (:class:`~contextfold.core.tokens.ApproxCounter`)."""


def counter_note(name: str, *, exact: str = "--tokenizer") -> str | None:
    """What a table's ``tokenizer NAME`` means, when it is the estimate (None otherwise);
    ``exact`` names what counts exactly instead."""
    if name != APPROX:
        return None
    return (
        f"tokenizer {APPROX}: an estimate, 4 ASCII characters a token (any other character "
        f"one); {exact} counts exactly"
    )


class Command(PlainHelp, TyperCommand):
    """A command that parses the old spellings of its options (:data:`.options.ALIASES`) as
    the new ones, saying so on stderr (they stay out of ``--help``'s option list), whose
    help paragraphs reflow to the terminal (typer keeps a docstring's line breaks) and whose
    help screen names values by their metavars (:mod:`.helpscreen`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        paragraphs = inspect.cleandoc(self.help or "").split("\n\n")
        self.help = "\n\n".join(" ".join(p.split()) for p in paragraphs)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        names = {name for param in self.params for name in param.opts}
        return super().parse_args(ctx, respell(args, names))


def respell(args: list[str], names: set[str]) -> list[str]:
    """``args`` with each old spelling of an option in ``names`` replaced by the new one
    (``--model-profile=X`` too); nothing after ``--``."""
    out: list[str] = []
    for i, arg in enumerate(args):
        if arg == "--":
            return out + args[i:]
        old, eq, value = arg.partition("=")
        new = ALIASES.get(old)
        if new is None or new not in names:
            out.append(arg)
            continue
        err_console.print(
            f"[yellow]warning:[/yellow] {old} is now {new}; the old spelling goes in {REMOVED_IN}",
            soft_wrap=True,
        )
        out.append(f"{new}{eq}{value}")
    return out


def check_args(specs: list[str], json_out: Path | None) -> None:
    """What can be checked before any work: strategy specs are not blank, --json is writable."""
    try:
        check_specs(specs)
        check_writable(json_out)
    except ContextFoldError as exc:
        fail(str(exc))


def load_experience(path: Path | None, save: Path | None) -> dict[str, Experience]:
    """The experiences ``--experience`` names (none: empty), with ``--save-experience``
    checked writable: a bad file is one line before any work."""
    from contextfold.core.experience_file import load_experiences

    try:
        check_writable(save, option="--save-experience")
        return load_experiences(path) if path is not None else {}
    except ContextFoldError as exc:
        fail(str(exc))


def folder_choice(
    folder: str | None, base_url: str | None, cache: Path | None, no_cache: bool, threads: int
) -> FolderChoice:
    """The ``--folder`` settings, picklable (Ray workers build their folders from them)."""
    from contextfold.bench.cluster import FolderChoice
    from contextfold.strategies.folding import default_cache_path

    path = None if no_cache else str(cache or default_cache_path())
    return FolderChoice(folder, base_url, path, threads)


def save(path: Path | None, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` (if given); exit 1, the data printed, if it fails."""
    if path is not None and not save_json(path, data, out=console, err=err_console):
        raise typer.Exit(1)


def make_progress() -> Progress:
    return progress_bar(err_console)


def fail(message: str) -> NoReturn:
    """One line on stderr and exit 2: the CLI's answer to bad input. ``message`` is text, not
    markup (an install hint's ``'contextfold[serve]'``, a path, a spec are shown as given)."""
    err_console.print(f"[red]error:[/red] {escape(message)}", soft_wrap=True)
    raise typer.Exit(2)


def print_skipped(messages: list[str], limit: int, label: str) -> None:
    for message in messages[:limit]:
        err_console.print(f"[yellow]{escape(label)}:[/yellow] {escape(message)}", soft_wrap=True)
    if len(messages) > limit:
        more = len(messages) - limit
        err_console.print(f"[yellow]{escape(label)}:[/yellow] ... and {more} more (all in --json)")


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
