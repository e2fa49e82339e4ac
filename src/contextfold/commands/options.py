"""The options the commands share, each defined once: its name, default and help.

A command takes ``ProfileOpt``, ``PricesOpt`` and the rest as parameter annotations, so
``--profile`` means the same and defaults the same wherever it appears (a test walks every
command to check it). Old spellings still parse, hidden, for one release (:data:`ALIASES`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from contextfold.core.meter import ModelProfile, PriceTable
    from contextfold.core.tokens import TokenCounter

__all__ = [
    "ALIASES",
    "DEFAULT_PRICES",
    "DEFAULT_PROFILE",
    "LEARNING",
    "LOCAL_RAY",
    "METERING",
    "MODELS",
    "RAY",
    "BaseUrlOpt",
    "BudgetOpt",
    "ExperienceOpt",
    "FoldCacheOpt",
    "FolderOpt",
    "JsonOpt",
    "LearnOpt",
    "ListJsonOpt",
    "NoFoldCacheOpt",
    "PricesOpt",
    "ProfileOpt",
    "RayOpt",
    "SaveExperienceOpt",
    "StrategiesOpt",
    "StrategyOpt",
    "ThreadsOpt",
    "TokenizerOpt",
    "ToolSchemasOpt",
    "resolve_counter_for",
    "resolve_prices",
    "resolve_profile",
]

DEFAULT_PROFILE = "qwen3-8b"
"""The model profile of every command that meters a model it does not run itself."""
DEFAULT_PRICES = "default"
REMOVED_IN = "0.2"
"""The release that drops the old spellings."""
ALIASES = {"--model-profile": "--profile", "-m": "--profile", "--steps": "--max-steps"}
"""Old spelling -> new one; they parse until :data:`REMOVED_IN`, with a warning."""
LOCAL_RAY = "local"
"""The ``--ray`` value that starts a local Ray cluster (what a bare ``--ray`` means)."""

METERING = "Metering"
MODELS = "Folder and engine"
LEARNING = "Learning across sessions"
RAY = "Ray"
"""The help panels the shared options sit in (the command's own options come first)."""

StrategiesOpt = Annotated[
    list[str],
    typer.Option(
        "--strategy",
        "-s",
        metavar="SPEC",
        help="Strategy to compare; repeat it (`contextfold strategies`).",
    ),
]
StrategyOpt = Annotated[
    str,
    typer.Option(
        "--strategy",
        "-s",
        metavar="SPEC",
        help="Strategy: a name, 'name key=value', a dotted path or a YAML file.",
    ),
]
ProfileOpt = Annotated[
    str | None,
    typer.Option(
        "--profile",
        "-p",
        metavar="NAME",
        help=f"Model profile: KV-cache shape and tokenizer (default: the model's own, else "
        f"{DEFAULT_PROFILE}; `contextfold profiles`). Was --model-profile, -m.",
        show_default=False,
        rich_help_panel=METERING,
    ),
]
TokenizerOpt = Annotated[
    str | None,
    typer.Option(
        metavar="NAME",
        help="Token counter: approx, smollm2 or a tokenizer file (default: the profile's).",
        show_default=False,
        rich_help_panel=METERING,
    ),
]
PricesOpt = Annotated[
    str,
    typer.Option(
        metavar="NAME",
        help="Price table: default, anthropic-1h, gpt-5 or openai.",
        rich_help_panel=METERING,
    ),
]
FolderOpt = Annotated[
    str | None,
    typer.Option(
        metavar="MODEL",
        help="Folder model: local, openai:NAME, scripted, agent or none (default: agent in "
        "run, else none).",
        show_default=False,
        rich_help_panel=MODELS,
    ),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option(
        metavar="URL",
        help="OpenAI-compatible server of the openai:NAME models.",
        rich_help_panel=MODELS,
    ),
]
BudgetOpt = Annotated[
    int | None,
    typer.Option(min=1, metavar="TOKENS", help="Context budget in tokens (default: none)."),
]
ThreadsOpt = Annotated[
    int,
    typer.Option(
        min=1, metavar="N", help="CPU threads of the embedded engine.", rich_help_panel=MODELS
    ),
]
JsonOpt = Annotated[
    Path | None,
    typer.Option("--json", metavar="PATH", help="Write the results here as JSON."),
]
ListJsonOpt = Annotated[bool, typer.Option("--json", help="JSON on stdout, not a table.")]
FoldCacheOpt = Annotated[
    Path | None,
    typer.Option(
        metavar="PATH",
        help="Fold cache (default: ~/.cache/contextfold/folds.sqlite).",
        rich_help_panel=MODELS,
    ),
]
NoFoldCacheOpt = Annotated[
    bool,
    typer.Option(
        "--no-fold-cache",
        help="Call the folder even for inputs seen before.",
        rich_help_panel=MODELS,
    ),
]
LearnOpt = Annotated[
    bool,
    typer.Option(
        "--learn",
        help="refold, carryon and ufold learn from the sessions before, in order.",
        rich_help_panel=LEARNING,
    ),
]
ExperienceOpt = Annotated[
    Path | None,
    typer.Option(
        "--experience",
        metavar="PATH",
        help="Start from what --save-experience wrote (frozen unless --learn).",
        rich_help_panel=LEARNING,
    ),
]
SaveExperienceOpt = Annotated[
    Path | None,
    typer.Option(
        "--save-experience",
        metavar="PATH",
        help="With --learn: write what each strategy learned here.",
        rich_help_panel=LEARNING,
    ),
]
RayOpt = Annotated[
    str | None,
    typer.Option(
        help="Run as Ray tasks: on the cluster at ADDRESS, or a local one (--ray alone).",
        metavar="[ADDRESS]",
        rich_help_panel=RAY,
    ),
]
ToolSchemasOpt = Annotated[
    bool,
    typer.Option(
        "--tool-schemas",
        help="Count the strategies' own tool schemas (restore, recall) in every prompt.",
        rich_help_panel=METERING,
    ),
]


def resolve_profile(name: str | None, *, model: str | None = None) -> ModelProfile:
    """``--profile``'s profile: the one named, else ``model``'s own, else the default."""
    from contextfold.core.meter import get_profile
    from contextfold.models.registry import MODELS

    entry = MODELS.get((model or "").partition(":")[0])
    return get_profile(name or (entry and entry.profile) or DEFAULT_PROFILE)


def resolve_counter_for(spec: str | None, profile: ModelProfile) -> TokenCounter:
    """``--tokenizer``'s counter: the one named, else the profile's own."""
    from contextfold.core.counters import resolve_counter

    return resolve_counter(spec or profile.tokenizer)


def resolve_prices(name: str) -> PriceTable:
    """``--prices``' table; an unknown name is a :class:`ConfigError` naming the known ones."""
    from contextfold.core.errors import ConfigError
    from contextfold.core.meter import PRICE_TABLES

    if name not in PRICE_TABLES:
        raise ConfigError(f"unknown price table {name!r}; known: {', '.join(PRICE_TABLES)}")
    return PRICE_TABLES[name]
