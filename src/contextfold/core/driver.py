"""The loop step: append and observe, prepare the view, answer the strategy's own tools.

Every way contextfold is driven takes its step through a :class:`Driver`:
:class:`~contextfold.session.Session` (``prepare``, ``call_tool``), the agent loop
(:class:`~contextfold.agent.Agent`), the proxy's sessions (``serve``) and replay
(``contextfold replay``). So a step is observed as it is appended, folds, the budget and the
view check happen in :func:`~contextfold.core.pipeline.prepare_view`, and a call of one of the
strategy's tools is parsed and answered in one place, the same way everywhere.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from contextfold.core.history import History, Step
from contextfold.core.messages import Message
from contextfold.core.own_tools import own_tool_names, own_tools
from contextfold.core.pipeline import OnFold, Rendered, prepare_view
from contextfold.core.protocols import Learning, Strategy, ToolProvider

__all__ = ["MAX_TOOL_ARGUMENTS", "Driver", "ToolAnswer", "tool_arguments"]

_log = logging.getLogger(__name__)

MAX_TOOL_ARGUMENTS = 64 * 1024
"""Characters of a strategy tool call's arguments read at most (they come from the model)."""


@dataclass(frozen=True, slots=True)
class ToolAnswer:
    """The answer to a call of one of the strategy's own tools, as the model reads it."""

    text: str
    error: bool = False
    """The call could not be answered as made: its arguments are not a JSON object, or the
    strategy failed on them (``text`` says which). A strategy's own refusal (``error: there
    is no step 9``) is an answer, not this."""


class Driver:
    """One history, the strategy rendering it and the budget: the step a loop takes.

    :meth:`append` adds a step and lets the strategy observe it; :meth:`prepare` runs the due
    folds, renders, checks and fits the view to the budget
    (:func:`~contextfold.core.pipeline.prepare_view`; ``on_fold`` hears of each fold record);
    :meth:`call_tool` answers a call of the strategy's own tools (``restore``, ``recall``),
    and :meth:`answer` gives the text the model reads back for it.
    With ``fit=False`` the budget is only the strategy's hint (replay measures every strategy
    on every recorded call; a live loop enforces it).
    """

    def __init__(
        self,
        strategy: Strategy,
        history: History,
        *,
        budget: int | None = None,
        fit: bool = True,
        on_fold: OnFold | None = None,
    ) -> None:
        self.strategy, self.history, self.budget = strategy, history, budget
        self.fit, self.on_fold = fit, on_fold
        self._own = own_tools(strategy)
        self._names = frozenset(own_tool_names(strategy))

    @classmethod
    def resumed(
        cls,
        strategy: Strategy,
        history: History,
        *,
        budget: int | None = None,
        fit: bool = True,
        on_fold: OnFold | None = None,
    ) -> Driver:
        """A driver on a history that already holds steps (reopened from a store, rebuilt):
        the strategy observes each of them first, in order, as it did live."""
        for step in history.steps:
            strategy.observe(step, history)
        return cls(strategy, history, budget=budget, fit=fit, on_fold=on_fold)

    # -- the step ------------------------------------------------------------------------
    def append(self, *messages: Message) -> Step:
        """Append one step made of ``messages`` (counted now); the strategy observes it."""
        step = self.history.append(*messages)
        self.strategy.observe(step, self.history)
        return step

    def append_step(self, step: Step) -> Step:
        """Append a step counted beforehand (replay counts a trajectory's steps once)."""
        self.history.append_step(step)
        self.strategy.observe(step, self.history)
        return step

    def prepare(self) -> Rendered:
        """The view to send now, and what preparing it did (see
        :func:`~contextfold.core.pipeline.prepare_view`)."""
        return prepare_view(
            self.strategy, self.history, self.budget, fit=self.fit, on_fold=self.on_fold
        )

    def record_call(self, rendered: Rendered, usage: Mapping[str, int] | None = None) -> None:
        """Keep the call that sent ``rendered``'s view in the history's store, if it has one."""
        store, session_id = self.history.store, self.history.session_id
        if store is not None and session_id is not None:
            messages, step = rendered.view.messages, len(self.history)
            store.record_call(session_id, step=step, messages=messages, usage=usage or {})

    def end(self) -> None:
        """The session is over: a learning strategy adds it to its experience."""
        if isinstance(self.strategy, Learning):
            self.strategy.end(self.history)

    # -- the strategy's own tools --------------------------------------------------------
    @property
    def own_tools(self) -> list[dict[str, Any]]:
        """The schemas of the strategy's own tools, which :meth:`call_tool` answers (a copy)."""
        return copy.deepcopy(self._own)

    @property
    def tool_schemas(self) -> tuple[Mapping[str, Any], ...]:
        """The same schemas as the strategy gave them, not copied (read them, never change
        them): for a caller that copies what it sends, once per call."""
        return tuple(self._own)

    def offers(self, name: str) -> bool:
        """Whether ``name`` is one of the strategy's own tools."""
        return name in self._names

    def call_tool(
        self, name: str, arguments: str | Mapping[str, Any] | None = None
    ) -> ToolAnswer | None:
        """Answer a call of one of the strategy's own tools (arguments as JSON text or a
        mapping); None for any other tool's name. Never raises for what the model sent:
        arguments that are not a JSON object, and a strategy that fails on them, give an
        error text (:attr:`ToolAnswer.error`)."""
        if name not in self._names:
            return None
        parsed = arguments if isinstance(arguments, Mapping) else tool_arguments(name, arguments)
        if isinstance(parsed, str):
            return ToolAnswer(parsed, error=True)
        assert isinstance(self.strategy, ToolProvider)  # it named the tool
        try:
            return ToolAnswer(self.strategy.call_tool(name, parsed, self.history))
        except Exception as exc:  # the strategy broke its contract on hostile arguments
            _log.warning("contextfold: %s(%.80r) failed: %r", name, parsed, exc)
            text = f"error: {name} could not use these arguments ({type(exc).__name__})"
            return ToolAnswer(text, error=True)

    def answer(self, name: str, arguments: str | Mapping[str, Any] | None = None) -> str:
        """What the model reads back for a call of ``name`` that is the strategy's to answer
        (:meth:`call_tool`'s text; an error text for a tool the strategy does not offer)."""
        answer = self.call_tool(name, arguments)
        return f"error: the strategy offers no tool {name!r}" if answer is None else answer.text


def tool_arguments(
    name: str, arguments: str | None, *, limit: int | None = MAX_TOOL_ARGUMENTS
) -> dict[str, Any] | str:
    """The arguments of a call of tool ``name`` as an object, or the error text to answer
    it with: over ``limit`` characters (None: no limit), not JSON (NaN and Infinity are not
    JSON numbers), nested too deeply, or not an object."""
    text = arguments or "{}"
    if limit is not None and len(text) > limit:
        return f"error: the arguments of {name} are over {limit:,} characters"
    try:
        parsed = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        return f"error: the arguments of {name} are nested too deeply"
    except ValueError as exc:  # not JSON, a constant, an integer past int()'s digits
        return f"error: the arguments of {name} are not valid JSON ({exc})"
    if not isinstance(parsed, dict):
        return f"error: the arguments of {name} must be a JSON object"
    return parsed


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")
