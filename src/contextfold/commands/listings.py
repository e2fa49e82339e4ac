"""What the options accept: ``contextfold strategies`` (each strategy, its folder need,
reversibility and options, from the registry: :mod:`contextfold.strategies.catalog`),
``contextfold models`` (the model specs) and ``contextfold profiles`` (the model profiles)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from contextfold.commands.common import console, fail
from contextfold.commands.options import ListJsonOpt
from contextfold.core.errors import ContextFoldError

__all__ = ["catalog_table", "models", "options_table", "profiles", "strategies"]

if TYPE_CHECKING:  # the catalog builds every strategy: imported when the command runs
    from contextfold.strategies.catalog import StrategyInfo


def strategies(
    spec: Annotated[
        str | None,
        typer.Argument(
            metavar="SPEC",
            help="One strategy, as a spec ('refold', 'mask reversible=true'): its options "
            "in full, with the values the spec gives them.",
        ),
    ] = None,
    as_json: ListJsonOpt = False,
) -> None:
    """List the strategies, or one strategy's options in full.

    For each: what it does, whether it needs a folder model, whether what it leaves out can be
    restored, and its options with their defaults.
    """
    from contextfold.strategies.catalog import catalog, describe

    try:
        infos = catalog() if spec is None else [describe(spec)]
    except ContextFoldError as exc:
        fail(str(exc))
    if as_json:
        data: Any = [i.to_json() for i in infos] if spec is None else infos[0].to_json()
        console.out(json.dumps(data, indent=2), highlight=False)
    elif spec is None:
        console.print(catalog_table(infos))
        console.print("`contextfold strategies NAME` describes each option.", markup=False)
    else:
        console.print(options_table(infos[0]))


def models(as_json: ListJsonOpt = False) -> None:
    """List the model specs that run --model and every --folder accept."""
    from contextfold.models.registry import MODELS

    rows = [
        {
            "spec": "openai:NAME" if e.name == "openai" else e.name,
            "description": e.description,
            "context_tokens": e.context_tokens,
            "profile": e.profile,
        }
        for e in MODELS.values()
    ]
    agent = "(as a folder) the agent's own model, with its own engine"
    if as_json:
        rows.append({"spec": "agent", "description": agent, "context_tokens": None})
        console.out(json.dumps(rows, indent=2), highlight=False)
        return
    for row in rows:
        context = f"context {row['context_tokens']:,} tokens"
        line = f"{escape(str(row['description']))}; {context}"
        console.print(f"[bold]{row['spec']}[/bold]  {line}")
    console.print(f"[bold]agent[/bold]  {agent}")


def profiles(as_json: ListJsonOpt = False) -> None:
    """List the model profiles: KV-cache shape and tokenizer.

    What replay, demo, inspect, run and bench sufficiency take as --profile.
    """
    from dataclasses import asdict

    from contextfold.core.meter import PROFILES

    if as_json:
        data = [
            {**asdict(p), "kv_bytes_per_token": p.kv_bytes_per_token} for p in PROFILES.values()
        ]
        console.out(json.dumps(data, indent=2), highlight=False)
        return
    for p in PROFILES.values():
        console.print(
            f"[bold]{p.name}[/bold]  layers={p.layers} kv_heads={p.kv_heads} "
            f"head_dim={p.head_dim} bytes/token={p.kv_bytes_per_token:,} tokenizer={p.tokenizer}"
        )


def catalog_table(infos: list[StrategyInfo]) -> Table:
    """One row per strategy: its folder need, reversibility, description and options."""
    table = Table(title="strategies", show_lines=True, expand=False)
    table.add_column("strategy", style="bold", no_wrap=True)
    table.add_column("folder", no_wrap=True)
    table.add_column("reversible", no_wrap=True)
    table.add_column("what it does; options (defaults)", overflow="fold")
    for info in infos:
        options = " ".join(f"{o.name}={_value(o.default)}" for o in info.options)
        text = escape(info.description) + (f"\n[dim]{escape(options)}[/dim]" if options else "")
        table.add_row(escape(info.name), info.folder, _reversible(info), text)
    return table


def options_table(info: StrategyInfo) -> Table:
    """One strategy's options: type, default (and the spec's value where it differs) and
    what each does."""
    changed = any(o.value != o.default for o in info.options)
    caption = f"folder: {info.folder}; reversible: {_reversible(info)}; class: {info.path}"
    table = Table(
        title=f"{escape(info.name)}: {escape(info.description)}",
        caption=escape(caption),
        caption_justify="left",
    )
    table.add_column("option", style="bold", no_wrap=True)
    table.add_column("type", overflow="fold")
    table.add_column("default", overflow="fold")
    if changed:
        table.add_column("value", overflow="fold")
    table.add_column("what it does", overflow="fold", ratio=1)
    for o in info.options:
        cells = [o.name, o.type, _value(o.default)] + ([_value(o.value)] if changed else [])
        table.add_row(*(escape(c) for c in [*cells, o.description]))
    if not info.options:
        table.add_row("(none)", "", "", *([""] if changed else []), "")
    return table


def _reversible(info: StrategyInfo) -> str:
    if info.lossless:
        return "yes (lossless)"
    return f"yes ({', '.join(info.tools)})" if info.tools else "no"


def _value(value: Any) -> str:
    """A value as a spec writes it (``key=value``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        return "[" + ",".join(_value(v) for v in value) + "]"
    if isinstance(value, str) and (not value or " " in value):
        return json.dumps(value)
    return str(value)
