"""Where a model-driven strategy's folder comes from: a folder spec, resolved at build time.

A strategy that needs a folder and gets none fails at build time with a ``ConfigError`` saying
how to give one; one source builds each model once, so a replay's strategies share one engine
and its prompt cache.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import Field

from contextfold.core.counters import resolve_counter
from contextfold.core.errors import ConfigError
from contextfold.core.protocols import Model
from contextfold.models.registry import build_model, model_entry
from contextfold.strategies.base import StrategyConfig
from contextfold.strategies.folding.cache import FoldCache
from contextfold.strategies.folding.folder import Folder

__all__ = ["NO_FOLDER", "FolderConfig", "FolderSource", "OptionalFolderConfig"]

NO_FOLDER = "none"
"""The folder spec of a strategy's model-free mode (only an :class:`OptionalFolderConfig`)."""

_HOW = (
    "give it one: folder=local (the embedded model), folder=openai:NAME (with --base-url), "
    "folder=scripted (a deterministic extractive folder) or folder=agent (the agent's own "
    "model, in live runs) in the strategy spec, or --folder on the command line"
)


class FolderConfig(StrategyConfig):
    """Base config of every strategy that folds with a model."""

    folder: str | None = Field(
        None,
        description="Folder model: local, openai:NAME, scripted or agent (default: --folder); "
        "none: no model, for strategies that have a model-free mode.",
    )


class OptionalFolderConfig(FolderConfig):
    """Config of a strategy that also works without a model: with ``folder=none`` (or
    ``--folder none``) the registry builds it as ``cls(config, folder=None)``, and it folds
    with its model-free rules (no folder calls)."""


@dataclass(slots=True)
class FolderSource:
    """Resolves folder specs to :class:`Folder` s, building each model once.

    A strategy's ``folder`` option (:class:`FolderConfig`) is ``local``, ``openai:NAME``,
    ``scripted`` (:mod:`contextfold.models.registry`) or ``agent``, the agent's own model with its
    own engine; without one it takes this source's default, which ``--folder`` sets (``agent`` in
    live runs).
    """

    default: str | None = None
    """The folder of strategies that name none (``--folder``)."""
    agent: Callable[[], Model] | None = None
    """Builds another instance of the agent's model (``agent``); None outside live runs."""
    agent_spec: str | None = None
    """The agent's model spec (``local``, ``openai:NAME``): its context size and counter."""
    base_url: str | None = None
    api_key: str | None = None
    threads: int = 2
    cache: FoldCache | None = None
    """Where folder replies are kept (replay and bench); None: no cache."""
    _built: dict[str, Folder] = field(default_factory=dict)

    def folder(self, spec: str | None, *, strategy: str) -> Folder:
        """The folder for a strategy's ``folder`` option (None: this source's default)."""
        chosen = spec or self.default
        if chosen is None:
            raise ConfigError(f"strategy {strategy!r} folds with a model but has no folder; {_HOW}")
        if chosen not in self._built:
            self._built[chosen] = self._build(chosen, strategy)
        return self._built[chosen]

    def _build(self, spec: str, strategy: str) -> Folder:
        if spec == "agent":
            if self.agent is None:
                raise ConfigError(
                    f"strategy {strategy!r}: folder=agent means the agent's own model, and "
                    f"there is no agent here (replay, bench); {_HOW}"
                )
            entry = model_entry(self.agent_spec or "scripted")
            model = self.agent()
            counter = resolve_counter(entry.counter)
            context = entry.context_tokens
            return Folder(
                model, context_tokens=context, counter=counter, name=f"agent:{model.name}"
            )
        entry = model_entry(spec)
        model = build_model(
            spec, base_url=self.base_url, api_key=self.api_key, threads=self.threads
        )
        cache = None if entry.name == "scripted" else self.cache
        counter = resolve_counter(entry.counter)
        return Folder(
            model, context_tokens=entry.context_tokens, counter=counter, cache=cache, name=spec
        )
