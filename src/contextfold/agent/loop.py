"""The agent loop: ReAct with native tool calls, a strategy rendering every prompt.

Every view is checked, metered and stored with its usage, so any live run can be replayed and
inspected later; a malformed tool call becomes an error result the model sees, never a crash.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from contextfold.core.driver import Driver, tool_arguments
from contextfold.core.errors import ContextBudgetError
from contextfold.core.folds import FoldRecord
from contextfold.core.history import History, Step
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.core.meter import Meter
from contextfold.core.pipeline import Rendered
from contextfold.core.protocols import (
    Compacting,
    Environment,
    Model,
    Strategy,
    UserSimulator,
)
from contextfold.core.view import View

__all__ = ["Agent", "AgentResult", "StopReason"]

StopReason = Literal["answered", "user_stop", "max_steps"]


@dataclass(slots=True)
class AgentResult:
    history: History
    meter: Meter
    stop: StopReason
    tool_calls: int = 0
    tool_errors: int = 0
    """Malformed or failed tool calls (bad JSON, unknown tool, tool raised)."""
    forced_compactions: int = 0
    """Views the loop found over the budget (each triggers the strategy's ``compact``)."""
    strategy_compactions: int = 0
    """Compactions the strategy forced itself while rendering under the budget."""
    views: list[View] = field(default_factory=list)


class Agent:
    """Runs one session: model, strategy, environment and (optionally) a simulated user.

    Each step is the loop step every entry point takes (:attr:`driver`, a
    :class:`~contextfold.core.driver.Driver`): before every model call a strategy that folds
    with a model (:class:`~contextfold.core.protocols.Folding`) folds first, metered apart; a
    view over the budget triggers the strategy's forced compaction (counted), and one still
    over raises :class:`~contextfold.core.errors.ContextBudgetError` with nothing lost. Tools
    run and their results join the assistant message as one step; the strategy's own tools
    are answered by the driver; a call with bad JSON, an unknown tool or arguments the tool
    refuses becomes an error result, counted in ``tool_errors``.
    """

    def __init__(
        self,
        model: Model,
        strategy: Strategy,
        env: Environment,
        *,
        history: History,
        user: UserSimulator | None = None,
        meter: Meter | None = None,
        max_steps: int = 30,
        budget: int | None = None,
        max_tokens: int | None = None,
        keep_views: bool = False,
        on_step: Callable[[Step], None] | None = None,
    ) -> None:
        self.model, self.strategy, self.env, self.user = model, strategy, env, user
        self.history = history
        self.budget, self.max_steps, self.max_tokens = budget, max_steps, max_tokens
        self.result = AgentResult(history, meter or Meter(), "max_steps")
        self._keep_views = keep_views
        self._on_step = on_step
        self.driver = Driver(strategy, history, budget=budget, on_fold=self._record_fold)
        self._tools = [*env.tools(), *self.driver.own_tools]

    def run(self, task: str | None = None, *, greeting: str | None = None) -> AgentResult:
        """Run until the agent answers (and no user goes on), the user stops, or the step cap.

        ``greeting`` opens with an agent message (tau2's agents greet first); without a
        ``task`` the simulated user speaks first. However it stops, a strategy that learns
        across sessions (:class:`~contextfold.core.protocols.Learning`) hears it ended."""
        try:
            return self._run(task, greeting)
        finally:
            self.driver.end()

    def _run(self, task: str | None, greeting: str | None) -> AgentResult:
        if greeting is not None:
            self._append(AssistantMessage(greeting))
        if task is None and self.user is not None:
            task = self.user.respond(self.history.messages())
            if task is None:
                self.result.stop = "user_stop"
                return self.result
        if task is not None:
            self._append(UserMessage(task))
        for _ in range(self.max_steps):
            message = self._call_model()
            self._append(message, *self._run_tools(message.tool_calls))
            if message.tool_calls:
                continue
            if self.user is None:
                self.result.stop = "answered"
                break
            reply = self.user.respond(self.history.messages())
            if reply is None:
                self.result.stop = "user_stop"
                break
            self._append(UserMessage(reply))
        if isinstance(self.strategy, Compacting):
            self.result.strategy_compactions = self.strategy.forced_compactions
        return self.result

    def _append(self, *messages: Message) -> Step:
        step = self.driver.append(*messages)
        if self._on_step is not None:
            self._on_step(step)
        return step

    def _call_model(self) -> AssistantMessage:
        rendered = self._render()
        view = rendered.view
        completion = self.model.complete(view.messages, self._tools, max_tokens=self.max_tokens)
        usage = completion.usage
        reported = usage.prompt_tokens > 0  # the engine's counts, when it gives them
        self.result.meter.record_call(
            view,
            completion_tokens=usage.completion_tokens,
            render_ns=rendered.render_ns,
            cached_tokens=usage.cached_tokens if reported else None,
            prompt_tokens=usage.prompt_tokens if reported else None,
        )
        if self._keep_views:
            self.result.views.append(view)
        self.driver.record_call(
            rendered,
            {
                "prompt_tokens": usage.prompt_tokens,
                "cached_tokens": usage.cached_tokens,
                "completion_tokens": usage.completion_tokens,
            },
        )
        return completion.message

    def _render(self) -> Rendered:
        """The view to send (:meth:`~contextfold.core.driver.Driver.prepare`): the due folds
        run first, their folder calls metered apart; over the budget, compacted or refused."""
        try:
            rendered = self.driver.prepare()
        except ContextBudgetError:
            self.result.forced_compactions += 1  # over the budget: counted before the run stops
            raise
        self.result.forced_compactions += rendered.compactions
        return rendered

    def _record_fold(self, record: FoldRecord) -> None:
        self.result.meter.record_folds((record,))

    def _run_tools(self, calls: Sequence[ToolCall]) -> list[ToolMessage]:
        return [ToolMessage(self._run_tool(c), c.id, name=c.name) for c in calls]

    def _run_tool(self, call: ToolCall) -> str:
        self.result.tool_calls += 1
        own = self.driver.call_tool(call.name, call.arguments)  # the strategy's own tools
        if own is not None:
            self.result.tool_errors += 1 if own.error else 0
            return own.text
        arguments = tool_arguments(call.name, call.arguments, limit=None)
        if isinstance(arguments, str):
            self.result.tool_errors += 1
            return arguments
        if not any(t["function"]["name"] == call.name for t in self._tools):
            names = ", ".join(t["function"]["name"] for t in self._tools)
            return self._error(f"there is no tool {call.name!r}; the tools are: {names}")
        try:
            return self.env.call(call.name, arguments)
        except Exception as exc:  # a tool's failure is the agent's information, not a crash
            return self._error(f"{call.name} failed: {type(exc).__name__}: {exc}")

    def _error(self, text: str) -> str:
        self.result.tool_errors += 1
        return f"error: {text}"
