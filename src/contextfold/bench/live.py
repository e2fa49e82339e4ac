"""Live runs of one task: build the model, the environment and the user, run the loop, score it.

Environments by spec: ``tau2:DOMAIN`` (a task id; the user simulated by a model on the same
backend), ``tutorial:TASK`` and ``workspace:TASK`` (:mod:`.live_workspace`).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from typing import Any

from contextfold.bench.live_options import LiveOptions, LiveResult
from contextfold.bench.live_workspace import run_workspace
from contextfold.core.errors import ConfigError
from contextfold.core.history import Step
from contextfold.core.meter import PRICE_TABLES, PROFILES, ModelProfile, PriceTable
from contextfold.core.protocols import Model, Store
from contextfold.core.tokens import TokenCounter
from contextfold.strategies.folding import FolderSource
from contextfold.strategies.registry import build_strategy

__all__ = ["LiveResult", "make_model", "new_session_id", "run_live"]

TUTORIAL_SYSTEM = (
    "You are a careful assistant. Use the calculator tool for every computation, then give "
    "the final answer with the numbers."
)


def make_model(
    spec: str, *, base_url: str | None = None, threads: int = 2, env_spec: str = ""
) -> Model:
    """``local`` (the embedded model), ``openai:NAME`` (any OpenAI-compatible server),
    ``scripted`` (a workspace task's scripted solution; ``env_spec`` names the task)."""
    if spec == "scripted":
        from contextfold.envs.workspace_solutions import scripted_agent

        kind, _, task = env_spec.partition(":")
        if kind != "workspace" or not task:
            raise ConfigError(
                "--model scripted replays a workspace task's scripted solution; use it with "
                "--env workspace:TASK"
            )
        return scripted_agent(task)
    if spec == "local":
        from contextfold.models import LocalModel

        return LocalModel(n_threads=threads)
    kind, _, name = spec.partition(":")
    if kind == "openai" and name:
        from contextfold.models import OpenAIModel

        return OpenAIModel(name, base_url=base_url)
    raise ConfigError(
        f"unknown model {spec!r}; use 'local', 'openai:MODEL' (with --base-url) or 'scripted'"
    )


def new_session_id(env_spec: str, task: str | None) -> str:
    """A session id unique per run: environment, task, UTC time and a random suffix."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    parts = [env_spec.replace(":", "-"), task, stamp, secrets.token_hex(3)]
    return "-".join(p for p in parts if p)


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
    session: str | None = None,
    resume: bool = False,
    folders: FolderSource | None = None,
    profile: ModelProfile = PROFILES["smollm2-135m"],
    prices: PriceTable = PRICE_TABLES["default"],
) -> LiveResult:
    """Run one task live and score it; ``resume``: continue the stored ``session``.
    ``folders`` gives the folder of a strategy that folds with a model (default: ``agent``,
    another instance of the agent's model from ``make``); the meter measures the agent's
    calls with ``profile`` (the embedded model's by default) under ``prices``.

    A tau2 user runs on its own engine, so the agent's and the user's prompt caches stay apart; a
    tutorial task's prompt is the task and its answer is scored; a workspace task runs in real
    files in a temporary directory, scored by opening them. With a store, the session is kept under
    an id unique per run (:func:`new_session_id`) or the one given; ``resume=True`` reopens it and
    goes on where it stopped (:func:`contextfold.agent.resume.resume`).
    """
    kind, _, name = env_spec.partition(":")
    runner = {"tau2": _run_tau2, "tutorial": _run_tutorial, "workspace": run_workspace}.get(kind)
    if runner is None or not name:
        raise ConfigError(
            f"unknown environment {env_spec!r}; use tau2:DOMAIN, tutorial:TASK or workspace:TASK"
        )
    if resume and (store is None or session is None):
        raise ConfigError("resuming needs the store and the id of the session to continue")
    folders = folders or FolderSource(default="agent", agent=make)
    build_strategy(strategy_spec, folders=folders)  # a bad spec fails before any work
    session = session or new_session_id(env_spec, task)
    meta = {"env": env_spec, "task": task, "strategy": strategy_spec}
    options = LiveOptions(
        strategy_spec,
        make,
        counter,
        max_steps,
        budget,
        store,
        on_step,
        session,
        resume,
        meta,
        folders,
        profile,
        prices,
    )
    return runner(name, task, options)


def _run_tau2(domain: str, task: str | None, o: LiveOptions) -> LiveResult:
    from contextfold.envs.tau2 import Tau2Env
    from contextfold.envs.tau2_trajectory import GREETING
    from contextfold.envs.tau2_user import Tau2User

    if task is None:
        raise ConfigError(f"tau2:{domain} needs --task ID (see `contextfold tasks {domain}`)")
    env = Tau2Env(domain, task)
    history = o.history(env.system_prompt())
    user = Tau2User(o.make(), env)
    result = o.start(history, env, user, greeting=GREETING)  # tau2's agents greet first
    stop = "user_stop" if result.stop in ("user_stop", "answered") else result.stop
    reward = env.reward(history.messages(), stop=stop)
    detail = {"reward_basis": list(reward.basis), "reward_skipped": list(reward.skipped)}
    return o.result(f"tau2:{domain}", task, result, reward.reward, detail)


def _run_tutorial(name: str, task: str | None, o: LiveOptions) -> LiveResult:
    from contextfold.envs.calculator import CalculatorEnv
    from contextfold.envs.tutorial import get_task, score

    spec = get_task(name)
    if o.strategy == "subtask-fold":
        return _run_subtasks(spec, task, o)
    history = o.history(TUTORIAL_SYSTEM)
    result = o.start(history, CalculatorEnv(), None, task=task or spec.prompt)
    answer = next(
        (s.message.content or "" for s in reversed(history.steps) if s.kind == "assistant"), ""
    )
    return o.result(f"tutorial:{name}", spec.id, result, score(spec, answer), {})


def _run_subtasks(spec: Any, task: str | None, o: LiveOptions) -> LiveResult:
    """The tutorial's subtask-folding agent: decompose, solve, fold, answer from summaries."""
    from contextfold.agent.subtasks import SubtaskAgent
    from contextfold.envs.calculator import CalculatorEnv
    from contextfold.envs.tutorial import score

    meter = o.meter()
    agent = SubtaskAgent(o.make(), CalculatorEnv(), meter=meter, counter=o.counter)
    run = agent.run(task or spec.prompt)
    if o.resume:
        raise ConfigError("subtask-fold runs cannot be resumed; start a new run")
    history = o.history(TUTORIAL_SYSTEM)
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
