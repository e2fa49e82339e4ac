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
    "LOCAL_RAY",
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
ALIASES = {"--model-profile": "--profile", "-m": "--profile"}
"""Old spelling -> new one; they parse until :data:`REMOVED_IN`, with a warning."""
LOCAL_RAY = "local"
"""The ``--ray`` value that starts a local Ray cluster (what a bare ``--ray`` means)."""

StrategiesOpt = Annotated[
    list[str],
    typer.Option(
        "--strategy",
        "-s",
        help="Strategy to compare (repeat it): a name, 'name key=value', a dotted path or a "
        "YAML file; `contextfold strategies` lists them.",
    ),
]
StrategyOpt = Annotated[
    str,
    typer.Option(
        "--strategy",
        "-s",
        help="Strategy: a name, 'name key=value', a dotted path or a YAML file; "
        "`contextfold strategies` lists them.",
    ),
]
ProfileOpt = Annotated[
    str | None,
    typer.Option(
        "--profile",
        "-p",
        help=f"Model profile: KV-cache shape and tokenizer (`contextfold profiles`). Default: "
        f"{DEFAULT_PROFILE}, or the model's own in run --model local (smollm2-135m). "
        f"Formerly --model-profile and -m, which work until {REMOVED_IN}.",
        show_default=False,
    ),
]
TokenizerOpt = Annotated[
    str | None,
    typer.Option(
        help="Token counter: approx, smollm2, PATH.gguf, PATH/tokenizer.json or a folder "
        f"holding one. Default: the profile's ({DEFAULT_PROFILE}: approx).",
        show_default=False,
    ),
]
PricesOpt = Annotated[
    str,
    typer.Option(
        help="Price table: default (Anthropic's 5-minute cache, OpenAI from GPT-5.6: cache "
        "reads 0.1x input, writes 1.25x), anthropic-1h (reads 0.1x, writes 2x), gpt-5 (reads "
        "0.1x, no write fee) or openai (GPT-4.1: reads 0.25x, no write fee).",
    ),
]
FolderOpt = Annotated[
    str | None,
    typer.Option(
        help="Folder model of the strategies that fold with one and name none: local, "
        "openai:NAME, scripted, agent (the agent's own) or none (model-free mode). Default: "
        "agent in run; elsewhere none, and a strategy that needs one says so.",
        show_default=False,
    ),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option(help="OpenAI-compatible server URL of the openai:NAME models."),
]
BudgetOpt = Annotated[
    int | None, typer.Option(min=1, help="Context budget in tokens (default: none).")
]
ThreadsOpt = Annotated[
    int, typer.Option(min=1, help="CPU threads of the embedded engine (1 on a busy machine).")
]
JsonOpt = Annotated[
    Path | None,
    typer.Option("--json", help="Write the results here as JSON (checked before any work)."),
]
ListJsonOpt = Annotated[bool, typer.Option("--json", help="JSON on stdout, not a table.")]
FoldCacheOpt = Annotated[
    Path | None,
    typer.Option(help="Fold cache file (default: ~/.cache/contextfold/folds.sqlite)."),
]
NoFoldCacheOpt = Annotated[
    bool, typer.Option("--no-fold-cache", help="Call the folder even for inputs seen before.")
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
SaveExperienceOpt = Annotated[
    Path | None,
    typer.Option("--save-experience", help="With --learn: write what each strategy learned here."),
]
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
