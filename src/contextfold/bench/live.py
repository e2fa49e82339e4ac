"""Live runs of one task: build the model, the environment, the user, run the loop, score it.

Environments by spec: ``tau2:airline|retail|telecom`` (a task id is required; the user is
simulated by a model on the same backend, with its own engine so each keeps its prompt cache)
and ``tutorial:budget|study-plan`` (the task is the prompt; the answer is scored).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from contextfold.agent import Agent
from contextfold.core.errors import ConfigError
from contextfold.core.history import History, Step
from contextfold.core.messages import SystemMessage
from contextfold.core.meter import Meter, get_profile
from contextfold.core.protocols import Model, Store
from contextfold.core.tokens import TokenCounter
from contextfold.strategies.folding import FolderSource
from contextfold.strategies.registry import build_strategy

__all__ = ["LiveResult", "make_model", "run_live"]

TUTORIAL_SYSTEM = (
    "You are a careful assistant. Use the calculator tool for every computation, then give "
    "the final answer with the numbers."
)


@dataclass(slots=True)
class LiveResult:
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


def make_model(spec: str, *, base_url: str | None = None, threads: int = 2) -> Model:
    """``local`` (the embedded model), ``openai:NAME`` (any OpenAI-compatible server)."""
    if spec == "local":
        from contextfold.models import LocalModel

        return LocalModel(n_threads=threads)
    kind, _, name = spec.partition(":")
    if kind == "openai" and name:
        from contextfold.models import OpenAIModel

        return OpenAIModel(name, base_url=base_url)
    raise ConfigError(f"unknown model {spec!r}; use 'local' or 'openai:MODEL' (with --base-url)")


def run_live(
    env_spec: str,
    task: str | None,
    strategy_spec: str,
    make: Callable[[], Model],
    *,
    counter: TokenCounter,
    max_steps: int = 30,
    budget: int | None = None,
    store: Store | None = None,
    on_step: Callable[[Step], None] | None = None,
    folders: FolderSource | None = None,
) -> LiveResult:
    """Run one task live and score it. ``folders`` gives the folder of a strategy that folds
    with a model (default: ``agent``, another instance of the agent's model from ``make``)."""
    kind, _, name = env_spec.partition(":")
    runner = {"tau2": _run_tau2, "tutorial": _run_tutorial}.get(kind)
    if runner is None or not name:
        raise ConfigError(f"unknown environment {env_spec!r}; use tau2:DOMAIN or tutorial:TASK")
    folders = folders or FolderSource(default="agent", agent=make)
    build_strategy(strategy_spec, folders=folders)  # a bad spec fails before any work
    options = _Options(strategy_spec, make, counter, max_steps, budget, store, on_step, folders)
    return runner(name, task, options)


@dataclass(frozen=True, slots=True)
class _Options:
    strategy: str
    make: Callable[[], Model]
    counter: TokenCounter
    max_steps: int
    budget: int | None
    store: Store | None
    on_step: Callable[[Step], None] | None
    folders: FolderSource

    def history(self, system: str, session: str) -> History:
        store = self.store
        return History(
            SystemMessage(system),
            counter=self.counter,
            store=store,
            session_id=session if store is not None else None,
        )

    def agent(self, history: History, env: Any, user: Any = None) -> Agent:
        return Agent(
            self.make(),
            build_strategy(self.strategy, folders=self.folders),
            env,
            history=history,
            user=user,
            meter=Meter(profile=get_profile("smollm2-135m")),
            max_steps=self.max_steps,
            budget=self.budget,
            on_step=self.on_step,
        )


def _run_tau2(domain: str, task: str | None, o: _Options) -> LiveResult:
    from contextfold.envs.tau2 import Tau2Env
    from contextfold.envs.tau2_trajectory import GREETING
    from contextfold.envs.tau2_user import Tau2User

    if task is None:
        raise ConfigError(f"tau2:{domain} needs --task ID (see `contextfold tasks {domain}`)")
    env = Tau2Env(domain, task)
    history = o.history(env.system_prompt(), f"tau2-{domain}-{task}")
    user = Tau2User(o.make(), env)
    result = o.agent(history, env, user).run(greeting=GREETING)  # tau2's agents greet first
    stop = "user_stop" if result.stop in ("user_stop", "answered") else result.stop
    reward = env.reward(history.messages(), stop=stop)
    detail = {"reward_basis": list(reward.basis), "reward_skipped": list(reward.skipped)}
    return _result(f"tau2:{domain}", task, o, result, reward.reward, detail)


def _run_tutorial(name: str, task: str | None, o: _Options) -> LiveResult:
    from contextfold.envs.calculator import CalculatorEnv
    from contextfold.envs.tutorial import get_task, score

    spec = get_task(name)
    if o.strategy == "subtask-fold":
        return _run_subtasks(spec, task, o)
    history = o.history(TUTORIAL_SYSTEM, f"tutorial-{name}")
    result = o.agent(history, CalculatorEnv()).run(task or spec.prompt)
    answer = next(
        (s.message.content or "" for s in reversed(history.steps) if s.kind == "assistant"), ""
    )
    return _result(f"tutorial:{name}", spec.id, o, result, score(spec, answer), {})


def _run_subtasks(spec: Any, task: str | None, o: _Options) -> LiveResult:
    """The tutorial's subtask-folding agent: decompose, solve, fold, answer from summaries."""
    from contextfold.agent.subtasks import SubtaskAgent
    from contextfold.envs.calculator import CalculatorEnv
    from contextfold.envs.tutorial import score

    meter = Meter(profile=get_profile("smollm2-135m"))
    agent = SubtaskAgent(o.make(), CalculatorEnv(), meter=meter, counter=o.counter)
    run = agent.run(task or spec.prompt)
    history = o.history(TUTORIAL_SYSTEM, f"tutorial-{spec.id}-subtasks")
    for record in run.subtasks:
        for step in record.history:
            if o.on_step is not None:
                o.on_step(step)
    counts = run.counts()
    steps = sum(len(r.history) for r in run.subtasks)
    detail = {**counts, "answer": run.answer, "steps": steps}
    return LiveResult(
        f"tutorial:{spec.id}",
        spec.id,
        o.strategy,
        score(spec, run.answer),
        "answered",
        history,
        meter,
        counts["tool_calls"],
        counts["tool_errors"],
        0,
        detail,
    )


def _result(
    env: str, task: str, o: _Options, result: Any, reward: float | None, detail: dict[str, Any]
) -> LiveResult:
    return LiveResult(
        env,
        task,
        o.strategy,
        reward,
        result.stop,
        result.history,
        result.meter,
        result.tool_calls,
        result.tool_errors,
        result.forced_compactions + result.strategy_compactions,
        detail,
    )
