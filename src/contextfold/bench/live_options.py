"""What every kind of live run shares: its options (:class:`LiveOptions`: the history to start
or reopen, the agent to build, how to start or resume it) and its result (:class:`LiveResult`).

:mod:`contextfold.bench.live` builds the options from ``run_live``'s arguments and picks the
runner for the environment (its own for tau2 and the tutorial, :mod:`.live_workspace` for the
workspace); each runner gets the options and returns :meth:`LiveOptions.result`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from contextfold.agent import Agent, AgentResult
from contextfold.agent.resume import resume as resume_run
from contextfold.core.errors import ConfigError
from contextfold.core.history import History, Step
from contextfold.core.messages import SystemMessage
from contextfold.core.meter import PRICE_TABLES, PROFILES, Meter, ModelProfile, PriceTable
from contextfold.core.protocols import Environment, Model, Store, Strategy, UserSimulator
from contextfold.core.tokens import TokenCounter
from contextfold.strategies.folding import FolderSource
from contextfold.strategies.registry import build_strategy

__all__ = ["LiveOptions", "LiveResult"]


@dataclass(slots=True)
class LiveResult:
    """One live run, scored: what ``run_live`` returns."""

    env: str
    task: str
    strategy: str
    reward: float | None
    stop: str
    history: History
    meter: Meter
    tool_calls: int = 0
    tool_errors: int = 0
    forced_compactions: int = 0
    detail: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """The run's result as JSON-ready values."""
        m = self.meter.summary()
        return {
            "env": self.env,
            "task": self.task,
            "strategy": self.strategy,
            "reward": self.reward,
            "stop": self.stop,
            "steps": len(self.history),
            "prompt_tokens": m["prompt_tokens"],
            "completion_tokens": m["completion_tokens"],
            "cost_usd": m["cost_usd"],
            "prefix_cache_reuse": m["prefix_cache_reuse"],
            "peak_context_tokens": m["peak_context_tokens"],
            "tool_calls": self.tool_calls,
            "tool_errors": self.tool_errors,
            "forced_compactions": self.forced_compactions,
            **self.meter.fold_summary(),
            "total_cost_usd": m["total_cost_usd"],
            **self.detail,
        }


@dataclass(frozen=True, slots=True)
class LiveOptions:
    """One live run's settings, as ``run_live`` was given them."""

    strategy: str
    make: Callable[[], Model]
    counter: TokenCounter
    max_steps: int
    budget: int | None
    store: Store | None
    on_step: Callable[[Step], None] | None
    session: str
    resume: bool
    meta: dict[str, Any]
    folders: FolderSource
    profile: ModelProfile = PROFILES["smollm2-135m"]
    """What the meter measures the agent's model with (KV cache)."""
    prices: PriceTable = PRICE_TABLES["default"]

    def meter(self) -> Meter:
        """A new meter of the agent's calls under the run's profile and prices."""
        return Meter(prices=self.prices, profile=self.profile)

    def history(self, system: str) -> History:
        """A new history under ``system`` (kept in the store, when there is one), or the
        stored session reopened when resuming."""
        store = self.store
        if self.resume and store is not None:
            return _reopen(store, self.session, system, self.counter, self.meta)
        return History(
            SystemMessage(system),
            counter=self.counter,
            store=store,
            session_id=self.session if store is not None else None,
            meta=self.meta,
        )

    def agent(
        self,
        history: History,
        env: Any,
        user: Any = None,
        *,
        strategy: Strategy | None = None,
        meter: Meter | None = None,
        max_steps: int | None = None,
        model: Model | None = None,
    ) -> Agent:
        """The agent loop over ``history`` in ``env``; each keyword replaces the default built
        from the options (a new strategy, meter and model)."""
        return Agent(
            model or self.make(),
            strategy or build_strategy(self.strategy, folders=self.folders),
            env,
            history=history,
            user=user,
            meter=meter or self.meter(),
            max_steps=self.max_steps if max_steps is None else max_steps,
            budget=self.budget,
            on_step=self.on_step,
        )

    def start(
        self, history: History, env: Environment, user: UserSimulator | None, **first: Any
    ) -> AgentResult:
        """Run the agent from the start, or (resuming a session with steps) from where it
        stopped; ``first``: what :meth:`Agent.run` opens with."""
        if not (self.resume and len(history)):
            return self.agent(history, env, user).run(**first)
        strategy = build_strategy(self.strategy, folders=self.folders)
        meter = self.meter()
        model = self.make()  # one model (and prompt cache) for both legs of the resumed run

        def make_agent(leg_user: UserSimulator | None, steps: int) -> Agent:
            return self.agent(
                history, env, leg_user, strategy=strategy, meter=meter, max_steps=steps, model=model
            )

        return resume_run(history, strategy, env, make_agent, user=user, max_steps=self.max_steps)

    def result(
        self, env: str, task: str, run: AgentResult, reward: float | None, detail: dict[str, Any]
    ) -> LiveResult:
        """The run's result: ``run`` (the agent's) scored ``reward``, with ``detail``."""
        return LiveResult(
            env,
            task,
            self.strategy,
            reward,
            run.stop,
            run.history,
            run.meter,
            run.tool_calls,
            run.tool_errors,
            run.forced_compactions + run.strategy_compactions,
            detail,
        )


def _reopen(
    store: Store, session: str, system: str, counter: TokenCounter, meta: dict[str, Any]
) -> History:
    """The stored session, checked to be a run of the same task."""
    history = History.open(store, session, counter=counter)
    recorded = history.system.content if history.system is not None else None
    same_task = all(history.meta.get(k, meta[k]) == meta[k] for k in ("env", "task"))
    if recorded != system or not same_task:
        was = ", ".join(f"{k}={v}" for k, v in history.meta.items()) or "unknown"
        raise ConfigError(
            f"session {session!r} is not a run of this task (it was: {was}); resume it with "
            "the --env and --task it was started with"
        )
    return history
