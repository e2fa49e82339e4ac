"""A strategy's own tools (``restore``, ``recall``, ``checkpoint``...): the one place their
schemas and names are read from a strategy, for the driver that routes them, the view check,
resuming a run, the catalog and the benchmarks' schema counts."""

from __future__ import annotations

import contextlib
import weakref
from typing import Any

from contextfold.core.protocols import Strategy, ToolProvider

__all__ = ["own_tool_names", "own_tools"]


def own_tools(strategy: Strategy) -> list[dict[str, Any]]:
    """The schemas of the tools ``strategy`` offers the agent (none unless it is a
    :class:`~contextfold.core.protocols.ToolProvider`)."""
    return list(strategy.tools()) if isinstance(strategy, ToolProvider) else []


def own_tool_names(strategy: Strategy) -> tuple[str, ...]:
    """Their names, in order; looked up once per strategy instance (a strategy's tools do not
    change)."""
    with contextlib.suppress(TypeError):  # not weak-referenceable: look them up each time
        known = _NAMES.get(strategy)
        if known is not None:
            return known
    names = tuple(t["function"]["name"] for t in own_tools(strategy))
    with contextlib.suppress(TypeError):
        _NAMES[strategy] = names
    return names


_NAMES: weakref.WeakKeyDictionary[object, tuple[str, ...]] = weakref.WeakKeyDictionary()
