"""What each strategy is, read from the registry and the strategy itself, never a table kept by
hand: for ``contextfold strategies`` and anything else that lists them.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args, get_origin

from pydantic.fields import FieldInfo
from pydantic_core import to_jsonable_python

from contextfold.core.own_tools import own_tool_names
from contextfold.core.protocols import Strategy
from contextfold.strategies.folding import NO_FOLDER, FolderConfig, FolderSource
from contextfold.strategies.folding.source import OptionalFolderConfig
from contextfold.strategies.full import FullStrategy
from contextfold.strategies.registry import STRATEGIES, build_strategy, spec_dict, strategy_class

__all__ = ["OptionInfo", "StrategyInfo", "catalog", "describe"]

FolderNeed = Literal["no", "yes", "optional"]


@dataclass(frozen=True, slots=True)
class OptionInfo:
    """One option of a strategy's config."""

    name: str
    type: str
    default: Any
    """The default as a JSON value."""
    value: Any
    """What the described spec sets it to (the default unless the spec names it)."""
    description: str


@dataclass(frozen=True, slots=True)
class StrategyInfo:
    """A strategy as ``contextfold strategies`` lists it (see the module docstring).

    - the description: the first sentence of the strategy class's docstring;
    - whether it needs a folder: its config is a
      :class:`~contextfold.strategies.folding.FolderConfig` (``optional`` for an
      :class:`~contextfold.strategies.folding.OptionalFolderConfig`, which also has a model-free
      mode);
    - whether it is reversible: the strategy, built from the spec (a folding one with the scripted
      folder), offers tools that bring back what it leaves out (``restore``, ``recall``; the view
      check refuses a stub naming a tool that is not offered), or it leaves nothing out (``full``);
    - its options: the config's fields, each with its type, default and description, and the value
      the spec gives it.
    """

    name: str
    path: str
    description: str
    folder: FolderNeed
    tools: tuple[str, ...]
    """The strategy's own tools: what brings back what it leaves out."""
    lossless: bool
    """It leaves nothing out (``full``)."""
    options: tuple[OptionInfo, ...]

    @property
    def reversible(self) -> bool:
        return self.lossless or bool(self.tools)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": self.path,
            "description": self.description,
            "folder": self.folder,
            "reversible": self.reversible,
            "restore_tools": list(self.tools),
            "lossless": self.lossless,
            "options": [
                {
                    "name": o.name,
                    "type": o.type,
                    "default": o.default,
                    "value": o.value,
                    "description": o.description,
                }
                for o in self.options
            ],
        }


def catalog() -> list[StrategyInfo]:
    """Every registered strategy, with its defaults, in the registry's order."""
    return [describe(name) for name in STRATEGIES]


def describe(spec: str | Mapping[str, Any]) -> StrategyInfo:
    """A strategy spec (a name, ``"name key=value"``, a dict, YAML) described; raises
    :class:`~contextfold.core.errors.ConfigError` for a spec that cannot be built."""
    options = spec_dict(spec)
    kind = str(options.get("type", ""))
    cls = strategy_class(kind)
    config: type[Any] = cls.Config
    strategy = _built(options, config)  # the spec's errors, in the registry's words
    name = kind if kind in STRATEGIES else str(config.model_fields["type"].default)
    values = config.model_validate({**options, "type": name})
    fields = {k: f for k, f in config.model_fields.items() if k != "type"}
    return StrategyInfo(
        name=name,
        path=STRATEGIES.get(kind, kind),
        description=_first_sentence(cls.__doc__ or ""),
        folder=_folder_need(config),
        tools=_tools(strategy),
        lossless=isinstance(strategy, FullStrategy),
        options=tuple(_option(k, f, getattr(values, k)) for k, f in fields.items()),
    )


def _built(options: dict[str, Any], config: type[Any]) -> Strategy:
    """The strategy the spec builds; a folding one with the scripted folder (no model is
    loaded to describe it), unless it is model-free (``folder=none``)."""
    if issubclass(config, FolderConfig) and options.get("folder") != NO_FOLDER:
        options = {**options, "folder": "scripted"}
    return build_strategy(options, folders=FolderSource())


def _folder_need(config: type[Any]) -> FolderNeed:
    if issubclass(config, OptionalFolderConfig):
        return "optional"
    return "yes" if issubclass(config, FolderConfig) else "no"


def _tools(strategy: Strategy) -> tuple[str, ...]:
    return own_tool_names(strategy)


def _option(name: str, field: FieldInfo, value: Any) -> OptionInfo:
    default = to_jsonable_python(field.get_default(call_default_factory=True))
    kind = _type_name(field.annotation)
    return OptionInfo(name, kind, default, to_jsonable_python(value), field.description or "")


def _type_name(annotation: Any) -> str:
    """``int``, ``fixed|cost``, ``int|None``, ``list``: a type as a person reads it."""
    origin = get_origin(annotation)
    if origin is Literal:
        return "|".join(str(a) for a in get_args(annotation))
    if origin is Union or origin is types.UnionType:
        return "|".join(_type_name(a) for a in get_args(annotation))
    if annotation is type(None):
        return "None"
    named = origin if origin is not None else annotation
    return named.__name__ if isinstance(named, type) else str(named)


def _first_sentence(doc: str) -> str:
    """The first sentence of a docstring's first paragraph, in one line, without rST marks."""
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    head, dot, _ = paragraph.partition(". ")
    return (head + "." if dot else paragraph).replace("``", "")
