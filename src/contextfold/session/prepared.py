"""What :meth:`Session.prepare` returns, and the tools a call offers.

:class:`Prepared` holds what to send (``messages`` and ``tools``, OpenAI dicts ready for
``chat.completions.create``) and what happened preparing it: the view's and the history's
tokens, the folds made (accepted, refused) and whether the budget forced a compaction. The
:class:`~contextfold.core.view.View` itself is there for its elisions and provenance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from contextfold.core.errors import ConfigError
from contextfold.core.folds import FoldRecord
from contextfold.core.history import History
from contextfold.core.messages import to_openai
from contextfold.core.pipeline import Rendered
from contextfold.core.view import View

__all__ = ["Prepared", "session_tools"]


@dataclass(frozen=True, slots=True)
class Prepared:
    """The view to send now, and what preparing it did."""

    messages: list[dict[str, Any]]
    """The view's messages as OpenAI chat dicts, ready for ``chat.completions.create``."""
    tools: list[dict[str, Any]]
    """The caller's tools, then the strategy's own (``restore``, ``recall``); empty when
    there are none (leave ``tools`` out of the request then: OpenAI refuses an empty list)."""
    tokens: int
    """The view's tokens (the session's counter; tool schemas not counted)."""
    full_tokens: int
    """The whole history's tokens: what sending everything would cost."""
    folds: tuple[FoldRecord, ...]
    """Folds this call made and the strategy accepted."""
    folds_refused: tuple[FoldRecord, ...]
    """Folds this call attempted and the strategy refused (each with its ``reason``); the
    view is as it was before them."""
    compactions: int
    """1 when the view was over the budget and the strategy compacted it, else 0."""
    view: View
    """The view: its elisions (what was left out, why, how to restore it) and provenance."""

    @classmethod
    def of(cls, rendered: Rendered, tools: list[dict[str, Any]], history: History) -> Prepared:
        view = rendered.view
        return cls(
            messages=[to_openai(m, parts=False) for m in view.messages],
            tools=tools,
            tokens=view.total_tokens,
            full_tokens=history.system_tokens + sum(s.total_tokens for s in history.steps),
            folds=rendered.accepted,
            folds_refused=rendered.refused,
            compactions=rendered.compactions,
            view=view,
        )


def session_tools(
    tools: Sequence[Any] | None, own: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The caller's tool schemas (dicts, or the openai SDK's objects) checked, then the
    strategy's own; a caller's tool named like one of the strategy's is refused."""
    if isinstance(tools, str | Mapping):
        raise ConfigError("tools must be a list of OpenAI function-tool schemas")
    theirs = [_tool(t, i) for i, t in enumerate(tools or ())]
    taken = {t["function"]["name"]: i for i, t in enumerate(theirs)}
    for schema in own:
        name = schema["function"]["name"]
        if name in taken:
            raise ConfigError(
                f"tools[{taken[name]}]: the tool {name!r} has the name of the strategy's own "
                f"tool, which the session answers (call_tool); rename yours"
            )
    return [*theirs, *(dict(t) for t in own)]


def _tool(raw: Any, i: int) -> dict[str, Any]:
    data = raw.model_dump(exclude_none=True) if isinstance(raw, BaseModel) else raw
    if not isinstance(data, Mapping):
        raise ConfigError(f"tools[{i}]: a tool is an object, got {type(raw).__name__}")
    fn = data.get("function")
    if data.get("type", "function") != "function" or not isinstance(fn, Mapping):
        raise ConfigError(
            f"tools[{i}]: only Chat Completions function tools are supported: "
            '{"type": "function", "function": {"name": ..., "parameters": {...}}}'
        )
    if not isinstance(fn.get("name"), str) or not fn["name"]:
        raise ConfigError(f"tools[{i}].function.name: a tool needs a name")
    return dict(data)
