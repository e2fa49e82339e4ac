"""``chain``: run view transforms one after another (clip, then prune, then mask, ...).

``{"type": "chain", "strategies": [spec, ...]}`` builds each member from a spec as
:func:`~contextfold.strategies.registry.build_strategy` accepts it (a short name with overrides
such as ``"mask keep=5"``, a dict, a dotted path). Every member must rewrite a view (have
``apply``, as every :class:`~contextfold.strategies.transform.TransformStrategy` does). The
chain renders the full view and hands it to each member's ``apply`` in order, so each one sees
what the previous left; elisions accumulate. ``observe`` reaches every member, and the tools of
members that offer some (``recall``) are the chain's tools, routed back to their owner. The
default chain is clip, then mask.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import Field

from contextfold.core.errors import ConfigError
from contextfold.core.history import History, Step
from contextfold.core.protocols import ToolProvider
from contextfold.core.view import View
from contextfold.strategies.base import StrategyConfig
from contextfold.strategies.transform import TransformStrategy

__all__ = ["ChainConfig", "ChainStrategy", "Transform"]


@runtime_checkable
class Transform(Protocol):
    """What a chain member must do: observe steps and rewrite a view."""

    @property
    def name(self) -> str: ...

    def observe(self, step: Step, history: History) -> None: ...

    def apply(self, view: View, history: History, budget: int | None) -> View: ...


class ChainConfig(StrategyConfig):
    type: Literal["chain"] = "chain"
    strategies: list[str | dict[str, Any]] = Field(
        default=["clip", "mask"], min_length=1, description="Member specs, applied in order."
    )


class ChainStrategy(TransformStrategy):
    """Applies its members' transforms in order to the full view."""

    Config = ChainConfig

    def __init__(self, config: ChainConfig | None = None) -> None:
        super().__init__()
        from contextfold.strategies.registry import build_strategy  # the registry imports us

        self.config = config = config or ChainConfig()
        self.name = "chain"
        self.members: list[Transform] = []
        for spec in config.strategies:
            member = build_strategy(spec)
            if not isinstance(member, Transform):
                raise ConfigError(
                    f"chain member {spec!r} ({member.name}) cannot rewrite a view: it has no "
                    "apply(view, history, budget); chain only transforms such as clip, prune, "
                    "mask, window, recall"
                )
            self.members.append(member)
        self._routes = self._tool_routes()

    def _tool_routes(self) -> dict[str, ToolProvider]:
        routes: dict[str, ToolProvider] = {}
        for member in self.members:
            if not isinstance(member, ToolProvider):
                continue
            for tool in member.tools():
                name = tool["function"]["name"]
                if name in routes:
                    raise ConfigError(
                        f"chain members both offer a tool named {name!r}; keep one of them"
                    )
                routes[name] = member
        return routes

    def observe(self, step: Step, history: History) -> None:
        for member in self.members:
            member.observe(step, history)

    def apply(self, view: View, history: History, budget: int | None) -> View:
        for member in self.members:
            view = member.apply(view, history, budget)
        return View(view.messages, view.tokens, view.provenance, view.elisions, strategy=self.name)

    def tools(self) -> list[dict[str, Any]]:
        """The tools of the members that offer some."""
        return [tool for member in self._providers() for tool in member.tools()]

    def call_tool(self, name: str, arguments: Mapping[str, Any], history: History) -> str:
        """Route a call to the member that offers ``name``."""
        member = self._routes.get(name)
        if member is None:
            offered = ", ".join(sorted(self._routes)) or "none"
            return f"error: unknown tool {name!r}; this chain offers: {offered}"
        return member.call_tool(name, arguments, history)

    def _providers(self) -> list[ToolProvider]:
        return list(dict.fromkeys(self._routes.values()))
