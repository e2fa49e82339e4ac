"""What a strategy spec is checked for, and how its errors read: one line per problem.

- an unknown short name suggests the closest known one (``did you mean 'refold'?``);
- invalid options are one line each, ``refold: window: must be >= 1, got 0``, an unknown
  option with the closest known one and the list of options (never a raw pydantic dump);
- a key given twice, as an override (``window keep=3 keep=4``) or in YAML, is refused
  (YAML itself would keep the last one silently).
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable
from typing import Any

import yaml
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from contextfold.core.errors import ConfigError

__all__ = ["closest", "load_yaml", "option_errors"]

_BOUNDS = {
    "greater_than_equal": (">=", "ge"),
    "greater_than": (">", "gt"),
    "less_than_equal": ("<=", "le"),
    "less_than": ("<", "lt"),
}


def closest(name: str, known: Iterable[str]) -> str:
    """`` did you mean 'x'?`` when a known name is close to ``name``, else empty."""
    match = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" did you mean {match[0]!r}?" if match else ""


def option_errors(strategy: str, exc: ValidationError, options: Collection[str]) -> str:
    """The validation errors of a strategy's options, one line each:
    ``refold: window: must be >= 1, got 0``."""
    return "\n".join(_line(strategy, error, options) for error in exc.errors())


def _line(strategy: str, error: ErrorDetails, options: Collection[str]) -> str:
    where = ".".join(str(part) for part in error["loc"]) or "options"
    return f"{strategy}: {where}: {_problem(error, where, options)}"


def _problem(error: ErrorDetails, where: str, options: Collection[str]) -> str:
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind == "extra_forbidden":
        known = ", ".join(sorted(options)) or "none"
        return f"unknown option;{closest(where, options)} options: {known}"
    if kind == "missing":
        return "required"
    if kind in _BOUNDS:
        op, key = _BOUNDS[kind]
        text = f"must be {op} {ctx[key]}"
    elif kind == "literal_error":
        text = f"must be {ctx['expected']}"
    else:
        text = error["msg"].replace("Input should be", "must be", 1)
        text = text[:1].lower() + text[1:]
    return f"{text}, got {error.get('input')!r}"


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a mapping that repeats a key."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                line = key_node.start_mark.line + 1
                raise ConfigError(f"strategy spec gives {key!r} twice (line {line})")
            seen.add(key)
        return super().construct_mapping(node, deep)


def load_yaml(text: str) -> Any:
    """YAML text parsed safely, a repeated key refused (:class:`ConfigError`)."""
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as exc:
        raise ConfigError(f"strategy spec is not valid YAML: {exc}") from exc
