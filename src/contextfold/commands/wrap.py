"""``contextfold wrap CLI [ARGS...]``: an agent CLI run through the proxy (see
:mod:`contextfold.wrap`): started on a free loopback port, or one running named by ``--url``."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.markup import escape
from typer.core import TyperCommand

from contextfold.commands.common import Command, err_console, fail
from contextfold.commands.options import BudgetOpt, resolve_profile
from contextfold.commands.serve import INSTALL_HINT, ControlOpt

if TYPE_CHECKING:
    from contextfold.wrap.clis import AgentCli
    from contextfold.wrap.run import WrappedProxy

__all__ = ["WRAP_EPILOG", "WrapCommand", "default_home", "wrap"]

WRAP_EPILOG = (
    "Default upstreams: claude, anthropic:https://api.anthropic.com; codex, "
    "responses:https://api.openai.com/v1; gemini, "
    "gemini:https://generativelanguage.googleapis.com."
)

NOT_FOUND = 127
"""A shell's exit status for a command it cannot find."""


class WrapCommand(Command):
    """Options are wrap's up to the CLI's name; everything after it is the CLI's, as typed
    (no old spellings rewritten there: the CLI's ``-s`` is not wrap's)."""

    allow_interspersed_args = False  # click: options end at the first argument

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return TyperCommand.parse_args(self, ctx, args)


def default_home() -> Path:
    """Where wrap keeps its sessions and the proxy's log unless told:
    ``$XDG_DATA_HOME/contextfold`` (``~/.local/share/contextfold``)."""
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "contextfold"


def wrap(
    cli: Annotated[
        str, typer.Argument(metavar="CLI", help="claude, codex or gemini.", show_default=False)
    ],
    args: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="ARGS...", help="The CLI's own arguments and options, passed as given."
        ),
    ] = None,
    upstream: Annotated[
        str | None,
        typer.Option(
            metavar="UPSTREAM",
            help="Where views go, as serve's --upstream (default: the provider the CLI calls "
            "itself, below).",
        ),
    ] = None,
    strategy: Annotated[
        str | None,
        typer.Option("--strategy", "-s", metavar="SPEC", help="Strategy spec (default: refold)."),
    ] = None,
    store: Annotated[
        str | None,
        typer.Option(
            metavar="STORE",
            help="SQLite file (or postgresql:// URL) keeping the sessions "
            "(default: ~/.local/share/contextfold/sessions.db).",
        ),
    ] = None,
    budget: BudgetOpt = None,
    url: Annotated[
        str | None,
        typer.Option(
            metavar="URL",
            help="Use the contextfold serve running here (e.g. http://127.0.0.1:8900) instead "
            "of starting one; its own options then apply.",
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="CONTEXTFOLD_TOKEN", metavar="TOKEN", help="With --url: the proxy's token."
        ),
    ] = None,
    control: ControlOpt = 0.0,
) -> None:
    """Run an agent CLI (Claude Code, Codex, Gemini CLI) through contextfold's proxy.

    Start the proxy on a free loopback port (or use the one at --url), point the CLI at it,
    run it with ARGS on this terminal, stop the proxy when it ends and print the session store
    and the tokens the upstream was spared.

    wrap's options go before the CLI's name; everything after it goes to the CLI as typed,
    its options too: contextfold wrap claude -p hi runs claude -p hi. No -- is needed there
    (one would reach the CLI as well). The exit status is the CLI's."""
    from contextfold.wrap import CLIS

    agent = CLIS.get(cli)
    if agent is None:
        fail(f"no CLI {cli!r}: contextfold wrap runs {_names(list(CLIS))}")
    served: dict[str, object] = {"--upstream": upstream, "--strategy": strategy}
    served |= {"--store": store, "--budget": budget, "--control": control or None}
    given = [name for name, value in served.items() if value is not None]
    if url is not None and given:
        fail(f"--url uses a running proxy with its own options: leave out {', '.join(given)}")
    executable = shutil.which(agent.name)
    if executable is None:
        _not_installed(agent.name, agent.title, agent.install)
    try:
        import httpx  # noqa: F401  (the serve extra: starlette, uvicorn, httpx)
        import uvicorn  # noqa: F401

        from contextfold.wrap import RunningProxy, WrapError, run_wrapped
    except ImportError as exc:
        fail(f"contextfold wrap needs {exc.name}: {INSTALL_HINT}")
    if url is not None:
        proxy: WrappedProxy = RunningProxy(url, token)
    else:
        proxy = _own_proxy(agent, upstream, strategy, store, budget, control)
    try:
        status = run_wrapped(agent, [executable, *(args or [])], proxy, say=_say)
    except WrapError as exc:
        fail(str(exc))
    raise typer.Exit(status)


def _say(line: str) -> None:
    err_console.print(line, soft_wrap=True, highlight=False, markup=False)


def _own_proxy(
    agent: AgentCli,
    upstream: str | None,
    strategy: str | None,
    store: str | None,
    budget: int | None,
    control: float = 0.0,
) -> WrappedProxy:
    from contextfold.serve import ServeConfig
    from contextfold.wrap import OwnProxy

    home = default_home()
    if store is None:
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        store = str(home / "sessions.db")
    config = ServeConfig(
        upstream=upstream or agent.default_upstream,
        strategy=strategy or "refold",
        store=store,
        budget=budget,
        counter=resolve_profile(None).tokenizer,
        control=control,
    )
    return OwnProxy(config, api=agent.api, log=home / "wrap.log")


def _not_installed(name: str, title: str, install: str) -> NoReturn:
    err_console.print(
        "[red]error:[/red] "
        + escape(f"{name} ({title}) is not installed (not on PATH): {install}"),
        soft_wrap=True,
        highlight=False,
    )
    raise typer.Exit(NOT_FOUND)


def _names(names: list[str]) -> str:
    """Names as a sentence says them (``a, b or c``)."""
    return " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
