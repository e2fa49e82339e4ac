"""Build strategies from a short name, a dotted path, a dict or YAML: one registry, so every caller
(the CLI, Session, serve, configs) builds a strategy the same way.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeAlias, TypeGuard

from pydantic import ValidationError

from contextfold.core.errors import ConfigError
from contextfold.core.protocols import (
    FoldingStrategyType,
    Strategy,
    StrategyConfig,
    StrategyType,
)
from contextfold.strategies.folding import (
    NO_FOLDER,
    FolderConfig,
    FolderSource,
    OptionalFolderConfig,
)
from contextfold.strategies.spec_checks import closest, load_yaml, option_errors

__all__ = [
    "STRATEGIES",
    "StrategyClass",
    "build_strategy",
    "folds_with_model",
    "needs_folder",
    "spec_dict",
    "spec_label",
    "strategy_class",
]

STRATEGIES: dict[str, str] = {
    "full": "contextfold.strategies.full:FullStrategy",
    "mask": "contextfold.strategies.mask:MaskStrategy",
    "window": "contextfold.strategies.window:WindowStrategy",
    "clip": "contextfold.strategies.clip:ClipStrategy",
    "prune": "contextfold.strategies.prune:PruneStrategy",
    "recall": "contextfold.strategies.recall:RecallStrategy",
    "chain": "contextfold.strategies.chain:ChainStrategy",
    "compact": "contextfold.strategies.compact:CompactStrategy",
    "summary": "contextfold.strategies.summary:SummaryStrategy",
    "resum": "contextfold.strategies.resum:ResumStrategy",
    "iterresearch": "contextfold.strategies.iterresearch:IterResearchStrategy",
    "refold": "contextfold.strategies.refold:RefoldStrategy",
    "supersede": "contextfold.strategies.supersede:SupersedeStrategy",
    "ufold": "contextfold.strategies.ufold:UfoldStrategy",
    "carryon": "contextfold.strategies.carryon:CarryOnStrategy",
    "cgs": "contextfold.strategies.cgs:CgsStrategy",
}
"""Short names and the classes they stand for; any dotted path works too."""

StrategyClass: TypeAlias = StrategyType | FoldingStrategyType
"""A class the registry builds strategies from (the contract: :mod:`contextfold.core.protocols`)."""

_YAML_KEY = re.compile(r"^[A-Za-z_][\w-]*\s*:(\s|$)")


def build_strategy(
    spec: str | Mapping[str, Any] | Strategy, *, folders: FolderSource | None = None
) -> Strategy:
    """Build a strategy from a spec (below); raises :class:`ConfigError`.

    ``folders`` resolves the folder of a strategy that folds with a model (its ``folder``
    option, else the source's default); without one, only an explicit ``folder`` works.

    A strategy class is a :class:`~contextfold.core.protocols.StrategyType`, built as
    ``cls(config)`` from its ``Config``, or a
    :class:`~contextfold.core.protocols.FoldingStrategyType` (its ``Config`` a
    :class:`~contextfold.strategies.folding.FolderConfig`), built as ``cls(config, folder=...)``;
    one whose config is an :class:`~contextfold.strategies.folding.OptionalFolderConfig` also has
    a model-free mode: ``folder=none`` builds it as ``cls(config, folder=None)``. Specs:

    - a short name from :data:`STRATEGIES` (``"full"``), with optional overrides ``"name key=value
      key=value"`` (values parsed as YAML scalars);
    - a dotted path to a class, ``"package.module:Class"`` or ``"package.module.Class"``;
    - a dict ``{"type": NAME_OR_PATH, **options}``;
    - YAML text of such a dict, or a path to a ``.yaml``/``.yml`` file holding one.
    """
    if isinstance(spec, Strategy):
        return spec
    options = spec_dict(spec)
    kind = options.pop("type", None)
    if not isinstance(kind, str) or not kind:
        raise ConfigError(f"strategy spec {spec!r} has no 'type' naming the strategy")
    cls = strategy_class(kind)
    short = kind if kind in STRATEGIES else str(cls.Config.model_fields["type"].default)
    try:
        config = cls.Config.model_validate({"type": short, **options})
    except ValidationError as exc:
        names = [n for n in cls.Config.model_fields if n != "type"]
        raise ConfigError(option_errors(short, exc, names)) from None
    if folds_with_model(cls):
        return _with_folder(cls, config, short, folders if folders is not None else FolderSource())
    assert isinstance(cls, StrategyType)  # not folding: cls(config), as the contract says
    return cls(config)


def folds_with_model(cls: StrategyClass) -> TypeGuard[FoldingStrategyType]:
    """Whether a strategy class folds with a model: its ``Config`` is a ``FolderConfig``, so
    it is built with a ``folder`` (:class:`~contextfold.core.protocols.FoldingStrategyType`)."""
    return issubclass(cls.Config, FolderConfig)


def _with_folder(
    cls: FoldingStrategyType, config: StrategyConfig, name: str, source: FolderSource
) -> Strategy:
    """``cls(config, folder=...)``: the folder the config's ``folder`` option names."""
    assert isinstance(config, FolderConfig)  # validated by cls.Config, a FolderConfig
    if (config.folder or source.default) == NO_FOLDER:
        _check_model_free(config, name)
        return cls(config, folder=None)
    return cls(config, folder=source.folder(config.folder, strategy=name))


def _check_model_free(config: FolderConfig, name: str) -> None:
    """``folder=none``: only a strategy with a model-free mode accepts it."""
    if not isinstance(config, OptionalFolderConfig):
        raise ConfigError(
            f"strategy {name!r} folds with a model and has no model-free mode, so folder=none "
            "does not apply; give it a folder (local, openai:NAME, scripted, agent)"
        )


def needs_folder(spec: str | Mapping[str, Any]) -> bool:
    """Whether the strategy a spec names folds with a model (without building it)."""
    options = spec_dict(spec)
    kind = options.get("type")
    if not isinstance(kind, str) or not kind:
        return False
    cls = strategy_class(kind)
    if issubclass(cls.Config, OptionalFolderConfig) and options.get("folder") == NO_FOLDER:
        return False
    return folds_with_model(cls)


def strategy_class(name: str) -> StrategyClass:
    """The class for a short name or dotted path: one that keeps the strategy contract
    (:class:`~contextfold.core.protocols.StrategyType`), or a :class:`ConfigError`."""
    path = STRATEGIES.get(name, name)
    module_name, sep, attr = path.partition(":")
    if not sep:
        module_name, _, attr = path.rpartition(".")
    if not module_name or not attr:
        known = ", ".join(sorted(STRATEGIES))
        raise ConfigError(
            f"unknown strategy {name!r};{closest(name, STRATEGIES)} known: {known}; or give a "
            "dotted path"
        )
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"cannot import strategy {path!r}: {exc}") from exc
    if not isinstance(cls, StrategyType) or not _is_config(cls.Config):
        raise ConfigError(
            f"{path!r} is not a strategy class: it needs a 'Config' attribute, a subclass of "
            "contextfold.core.protocols.StrategyConfig (a pydantic model), and is built as "
            "cls(config)"
        )
    return cls


def _is_config(config: object) -> bool:
    return isinstance(config, type) and issubclass(config, StrategyConfig)


def spec_label(spec: str | Mapping[str, Any]) -> str:
    """A spec's label (a replay column, an experience file's key): a short spec as written,
    blanks collapsed; a YAML or dict spec by its ``type``."""
    if isinstance(spec, str) and "\n" not in spec:
        return " ".join(spec.split())
    return str(spec_dict(spec).get("type", "?"))


def spec_dict(spec: str | Mapping[str, Any]) -> dict[str, Any]:
    """A spec in any accepted form as a dict with a ``type`` (not yet validated)."""
    if isinstance(spec, Mapping):
        return dict(spec)
    text = spec.strip()
    if text.endswith((".yaml", ".yml")) and "\n" not in text:
        path = Path(text)
        if not path.is_file():
            raise ConfigError(f"strategy config file {path} does not exist")
        return _yaml_dict(path.read_text(), spec)
    if "\n" in text or text.startswith("{") or _YAML_KEY.match(text):
        return _yaml_dict(text, spec)
    name, *pairs = text.split()
    return {"type": name, **_overrides(pairs)}


def _yaml_dict(text: str, spec: object) -> dict[str, Any]:
    data = load_yaml(text)
    if not isinstance(data, dict):
        raise ConfigError(f"strategy spec {spec!r} must be a mapping with a 'type' key")
    return data


def _overrides(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"strategy override {pair!r} must look like key=value")
        if key == "type":
            raise ConfigError(f"strategy override {pair!r}: the strategy is named first, not set")
        if key in out:
            raise ConfigError(f"strategy option {key!r} is given twice ({key}={out[key]}, {pair})")
        out[key] = load_yaml(value)
    return out
