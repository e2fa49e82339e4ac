"""``chain``: run view transforms one after another (clip, then prune, then mask, ...).

Each member sees what the previous one left and the elisions accumulate, so simple transforms
combine without a strategy of their own; the default chain is clip, then mask.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from contextfold.core.errors import ConfigError
from contextfold.core.experience import Experience
from contextfold.core.folds import FoldRecord
from contextfold.core.history import History, Step
from contextfold.core.protocols import Compacting, Folding, Learning, ToolProvider, Transform
from contextfold.core.view import View
from contextfold.strategies.base import StrategyConfig
from contextfold.strategies.transform import TransformStrategy

# Transform is declared in core.protocols; it stays importable from here.
__all__ = ["ChainConfig", "ChainStrategy", "Transform"]


class ChainConfig(StrategyConfig):
    type: Literal["chain"] = "chain"
    strategies: list[str | dict[str, Any]] = Field(
        default=["clip", "mask"], min_length=1, description="Member specs, applied in order."
    )


class ChainStrategy(TransformStrategy):
    """Applies its members' transforms in order to the full view.

    ``{"type": "chain", "strategies": [spec, ...]}`` builds each member from a spec as
    :func:`~contextfold.strategies.registry.build_strategy` accepts it. Every member must rewrite a
    view (have ``apply``, as every :class:`~contextfold.strategies.transform.TransformStrategy`
    does). ``observe``, ``fold`` and ``compact`` reach every member that has them (``share`` and
    ``end`` the first that learns across sessions), ``forced_compactions`` sums theirs, and the
    tools of members that offer some (``recall``, ``restore``) are the chain's tools, routed back
    to their owners (members may share ``restore``).
    """

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
        self._schemas: dict[str, dict[str, Any]] = {}
        self._routes = self._tool_routes()

    def _tool_routes(self) -> dict[str, list[ToolProvider]]:
        """Each tool name and the members offering it. Members may share only ``restore``: it
        reads the history, so whoever answers gives the same text (a line range too, which
        the schema naming more options offers)."""
        routes: dict[str, list[ToolProvider]] = {}
        for member in self.members:
            if not isinstance(member, ToolProvider):
                continue
            for tool in member.tools():
                name = tool["function"]["name"]
                known = self._schemas.get(name)
                if known is not None and name != "restore":
                    raise ConfigError(
                        f"chain members both offer a tool named {name!r}; keep one of them"
                    )
                if known is None or _options(tool) > _options(known):
                    self._schemas[name] = tool
                routes.setdefault(name, []).append(member)
        return routes

    def observe(self, step: Step, history: History) -> None:
        for member in self.members:
            member.observe(step, history)

    def apply(self, view: View, history: History, budget: int | None) -> View:
        for member in self.members:
            view = member.apply(view, history, budget)
        return View(view.messages, view.tokens, view.provenance, view.elisions, strategy=self.name)

    def fold(self, history: History, budget: int | None) -> list[FoldRecord]:
        """The folds of the members that fold with a model, in member order."""
        return [r for m in self.members if isinstance(m, Folding) for r in m.fold(history, budget)]

    def share(self, experience: Experience) -> None:
        """The first member that learns across sessions learns from the chain's experience
        (one experience counts each session once; later learners learn nothing)."""
        learner = self._learner()
        if learner is not None:
            learner.share(experience)

    def end(self, history: History) -> None:
        learner = self._learner()
        if learner is not None:
            learner.end(history)

    def _learner(self) -> Learning | None:
        return next((m for m in self.members if isinstance(m, Learning)), None)

    def compact(self, history: History, budget: int) -> bool:
        """Ask every member that can compact; True if any will shrink the view."""
        asked = [m.compact(history, budget) for m in self.members if isinstance(m, Compacting)]
        return any(asked)

    @property
    def forced_compactions(self) -> int:
        """The compactions the members forced themselves, summed."""
        return sum(m.forced_compactions for m in self.members if isinstance(m, Compacting))

    def tools(self) -> list[dict[str, Any]]:
        """The tools of the members that offer some, each name once."""
        return list(self._schemas.values())

    def call_tool(self, name: str, arguments: Mapping[str, Any], history: History) -> str:
        """Route a call to every member that offers ``name`` (each may note it: refold shows
        a restored step again); the first member's answer is returned."""
        members = self._routes.get(name)
        if not members:
            offered = ", ".join(sorted(self._routes)) or "none"
            return f"error: unknown tool {name!r}; this chain offers: {offered}"
        answers = [member.call_tool(name, arguments, history) for member in members]
        return answers[0]


def _options(tool: dict[str, Any]) -> int:
    """How many parameters a tool schema names."""
    return len(tool["function"].get("parameters", {}).get("properties", {}))
