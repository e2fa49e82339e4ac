"""``contextfold inspect``: a local page showing, call by call, what the model saw."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from contextfold.commands.common import check_args, console, fail, print_skipped
from contextfold.commands.options import (
    DEFAULT_PRICES,
    BaseUrlOpt,
    BudgetOpt,
    FolderOpt,
    PricesOpt,
    ProfileOpt,
    TokenizerOpt,
    resolve_prices,
    resolve_profile,
)
from contextfold.core.errors import ContextFoldError

if TYPE_CHECKING:
    from contextfold.inspect import Catalog

__all__ = ["inspect"]

INSTALL_HINT = "pip install 'contextfold[serve]'  (starlette, uvicorn)"


def inspect(
    paths: Annotated[
        list[str],
        typer.Argument(
            metavar="PATH...",
            help="A store (a SQLite file or a postgresql:// URL, as run --store and serve "
            "--store write them) or trajectory files and folders.",
        ),
    ],
    strategy: Annotated[
        list[str] | None,
        typer.Option(
            "--strategy",
            "-s",
            metavar="SPEC",
            help="Strategy to replay; repeat it to compare (trajectories: full).",
        ),
    ] = None,
    port: Annotated[
        int, typer.Option(min=0, max=65535, metavar="PORT", help="Port on 127.0.0.1 (0: any).")
    ] = 8765,
    export: Annotated[
        Path | None,
        typer.Option(metavar="DIR", help="Write a static site (page + JSON) here and exit."),
    ] = None,
    profile: ProfileOpt = None,
    tokenizer: TokenizerOpt = None,
    prices: PricesOpt = DEFAULT_PRICES,
    budget: BudgetOpt = None,
    folder: FolderOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Show, call by call, the full history beside the view each strategy sent.

    A local page (or a static site with --export): elisions, provenance, the cache break, and
    plots of tokens, cost and reuse per strategy.
    """
    check_args(strategy or [], None)
    try:
        folders = (folder, base_url)
        catalog = _catalog(paths, strategy, profile, tokenizer, prices, budget, folders)
    except ContextFoldError as exc:
        fail(str(exc))
    print_skipped(catalog.skipped, 5, "skipped")
    if export is not None:
        _export(catalog, export)
        return
    _serve(catalog, port)


def _catalog(
    paths: list[str],
    specs: list[str] | None,
    profile_name: str | None,
    tokenizer: str | None,
    prices: str,
    budget: int | None,
    folder: tuple[str | None, str | None],
) -> Catalog:
    """Every session of ``paths`` under each strategy; a bad option fails before any page."""
    try:
        from contextfold.inspect import Setup, collect
        from contextfold.inspect.sources import is_store
    except ImportError as exc:
        raise ContextFoldError(f"inspect needs {exc.name}: {INSTALL_HINT}") from exc
    from contextfold.strategies.folding import FoldCache, FolderSource
    from contextfold.strategies.registry import build_strategy

    profile = resolve_profile(profile_name)
    folders = FolderSource(default=folder[0], base_url=folder[1], cache=FoldCache())
    setup = Setup(resolve_prices(prices), profile, budget, folders)
    chosen = strategy_list(specs, stores_only=all(is_store(p) for p in paths))
    for spec in chosen:  # a bad spec fails here, before any page is served
        build_strategy(spec, folders=folders)
    return collect(paths, chosen, setup, tokenizer or profile.tokenizer)


def strategy_list(specs: list[str] | None, *, stores_only: bool) -> list[str]:
    """The ``-s`` strategies; by default ``full`` for trajectories, none for stores (whose
    calls are shown as sent)."""
    if specs:
        return specs
    return [] if stores_only else ["full"]


def _export(catalog: Catalog, out: Path) -> None:
    from contextfold.inspect import export_site

    try:
        written = export_site(catalog, out)
    except (OSError, ContextFoldError) as exc:
        fail(f"cannot export to {out}: {exc}")
    console.print(f"wrote {len(written)} files to {out}; open {out / 'index.html'}", markup=False)


def _serve(catalog: Catalog, port: int) -> None:
    from contextfold.inspect import InspectServer

    try:
        server = InspectServer(catalog, port=port)
    except OSError as exc:
        fail(f"cannot listen on 127.0.0.1:{port}: {exc}; choose another --port (0: any)")
    with server:
        console.print(f"contextfold inspect on [bold]{server.url}[/bold] (Ctrl-C to stop)")
        with contextlib.suppress(KeyboardInterrupt):
            server.wait()
