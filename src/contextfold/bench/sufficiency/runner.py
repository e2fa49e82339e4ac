"""Run the oracle over tau2 tasks for each strategy x budget x mode, and aggregate.

One run is one task under one :class:`Setting`, through the real agent loop with the budget
(forced compactions included), scored by tau2's evaluator; rows (:func:`aggregate`) are means
over the tasks per domain x setting.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from typing import Any

from contextfold.agent.loop import Agent
from contextfold.bench.cluster import FolderChoice, RaySweep
from contextfold.bench.schemas import schema_tokens
from contextfold.bench.sufficiency.noise import NoisyEnv
from contextfold.bench.sufficiency.oracle import Oracle
from contextfold.bench.sufficiency.plan import build_plan
from contextfold.bench.sufficiency.session import SessionEnv, TaskEnvs
from contextfold.bench.sufficiency.user import ScriptedUser
from contextfold.core.counters import resolve_counter
from contextfold.core.errors import ContextBudgetError, ContextFoldError
from contextfold.core.experience import Experience, start_from
from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage, Message, SystemMessage, ToolMessage
from contextfold.core.meter import FOLD_KEYS, PRICE_TABLES, Meter, get_profile
from contextfold.core.protocols import Learning
from contextfold.envs.tau2 import Tau2Env
from contextfold.strategies.folding import FolderSource
from contextfold.strategies.registry import build_strategy, spec_label

__all__ = [
    "ROW_KEYS",
    "FolderChoice",
    "Metering",
    "RunResult",
    "Setting",
    "TaskRunner",
    "aggregate",
    "result_json",
    "run_matrix",
    "run_one",
    "run_task",
]

ROW_KEYS = (
    "strategy",
    "budget",
    "noisy",
    "tool_schemas",
    "domain",
    "tasks",
    "reward_mean",
    "redundant_calls",
    "lost_user_values",
    "lost_tool_values",
    "refetched_values",
    "steps",
    "prompt_tokens",
    "peak_context_tokens",
    "forced_compactions",
    "cost_usd",
    *FOLD_KEYS,
    "total_cost_usd",
)
"""The keys of every aggregated row (``--json``), in order."""


@dataclass(frozen=True, slots=True)
class Setting:
    """One cell of the matrix: a strategy spec, a budget (None: unlimited), a mode."""

    strategy: str
    budget: int | None = None
    noisy: bool = False
    tool_schemas: bool = False
    """Count the strategy's own tool schemas in every prompt (:mod:`contextfold.bench.schemas`)."""


@dataclass(frozen=True, slots=True)
class Metering:
    """How every run of a matrix is counted and priced, by name (workers build their own)."""

    tokenizer: str = "approx"
    """The history's token counter (``--tokenizer``)."""
    prices: str = "default"
    profile: str = "qwen3-8b"

    def meter(self, tool_tokens: int = 0) -> Meter:
        return Meter(
            prices=PRICE_TABLES[self.prices],
            profile=get_profile(self.profile),
            tool_tokens=tool_tokens,
        )


@dataclass(slots=True)
class RunResult:
    """One task under one setting."""

    domain: str
    task_id: str
    setting: Setting
    reward: float
    redundant_calls: int
    steps: int
    """Model calls (agent turns)."""
    prompt_tokens: int
    peak_context_tokens: int
    forced_compactions: int
    cost_usd: float
    context: list[int] = field(default_factory=list)
    """Context tokens of each model call, in order."""
    skipped: list[str] = field(default_factory=list)
    untold: list[str] = field(default_factory=list)
    error: str | None = None
    """Why the run was cut short (the strategy could not fit the budget), if it was."""
    stop: str = ""
    """How the session ended (``user_stop`` normally)."""
    folds: dict[str, float] = field(default_factory=dict)
    """The folder's figures (``fold_calls`` ... ``fold_ms_median``; all 0 without one)."""
    lost_user_values: int = 0
    """Needed values the user had said that the view no longer held (per action)."""
    lost_tool_values: int = 0
    """Needed values a tool had returned that the view no longer held (per action)."""
    refetched_values: int = 0
    """Values brought back by a redundant call (restore, recall, repeated read or ask)."""


class TaskRunner:
    """Runs one task under many settings in one process, sharing its plan, the memo of tool
    outputs (:class:`~.session.TaskEnvs`) and the scores.

    A run: the task's :class:`~.plan.Plan`, the :class:`~.oracle.Oracle` as the model, the
    :class:`~.user.ScriptedUser`, a fresh episode (:class:`~.session.SessionEnv`, padded by
    :class:`~.noise.NoisyEnv` in noisy mode) and the strategy. A run the strategy cannot fit in the
    budget (:class:`~contextfold.core.errors.ContextBudgetError`) scores 0. Scoring is slow (the
    evaluator rebuilds the database twice), so a score is cached under a key holding everything the
    evaluator reads (:meth:`score_key`); runs that differ only by repeated reads and restores share
    it.
    """

    def __init__(
        self,
        domain: str,
        task_id: str,
        *,
        folders: FolderSource | None = None,
        on_run: Callable[[RunResult, Meter], None] | None = None,
        learned: Mapping[Setting, Experience] | None = None,
        metering: Metering | None = None,
    ) -> None:
        self.domain, self.task_id = domain, str(task_id)
        self.folders = folders or FolderSource()
        self.metering = metering or Metering()
        self.learned = learned or {}
        """Each setting's experience, when the strategies learn across tasks."""
        self.on_run = on_run
        """Hears of each run with its result and the agent's meter (its call records: what
        pricing the run under another table needs)."""
        self.plan = build_plan(domain, self.task_id)
        self.envs = TaskEnvs(domain, self.task_id)
        self.rewards: dict[str, float] = {}
        self.scored = 0
        """Runs scored by tau2's evaluator (the others hit the cache)."""

    def run(self, setting: Setting) -> RunResult:
        """Run the oracle under ``setting`` and score it."""
        plan, session = self.plan, SessionEnv(self.envs)
        oracle, user = Oracle(plan), ScriptedUser(plan, session)
        noisy = NoisyEnv(session, plan) if setting.noisy else None
        counter = resolve_counter(self.metering.tokenizer)
        history = History(SystemMessage(self.envs.live.system_prompt()), counter=counter)
        strategy = build_strategy(setting.strategy, folders=self.folders)
        if setting in self.learned and isinstance(strategy, Learning):
            strategy.share(self.learned[setting])
        tools = schema_tokens(strategy, history.counter) if setting.tool_schemas else 0
        agent = Agent(
            oracle,
            strategy,
            noisy or session,
            history=history,
            meter=self.metering.meter(tools),
            user=user,
            budget=setting.budget,
            max_steps=8 * len(plan.actions) + 20,  # recovery: at most 7 calls per action
        )
        error = None
        try:
            stop: str = agent.run(user.respond([])).stop
        except ContextBudgetError as exc:
            stop, error = "max_steps", str(exc)
        reward = 0.0 if error else self.reward(_real(history.messages(), noisy), session, stop)
        result = self._result(setting, agent, oracle, reward, error, stop)
        if self.on_run is not None:
            self.on_run(result, agent.result.meter)
        return result

    def _result(
        self,
        setting: Setting,
        agent: Agent,
        oracle: Oracle,
        reward: float,
        error: str | None,
        stop: str,
    ) -> RunResult:
        meter = agent.result.meter
        return RunResult(
            self.domain,
            self.task_id,
            setting,
            reward,
            oracle.recovery_stats.redundant_calls,
            len(meter.calls),
            meter.prompt_tokens,
            meter.peak_context_tokens,
            agent.result.forced_compactions,
            sum(c.cost_usd for c in meter.calls),
            [c.prompt_tokens for c in meter.calls],
            oracle.stats.skipped,
            oracle.stats.untold,
            error,
            stop,
            {k: float(v) for k, v in meter.fold_summary().items()},
            oracle.stats.lost_user_values,
            oracle.stats.lost_tool_values,
            oracle.recovery_stats.refetched_values,
        )

    def reward(self, messages: Sequence[Message], session: SessionEnv, stop: str) -> float:
        """tau2's reward for the conversation, cached under :meth:`score_key`."""
        key = self.score_key(messages, session, stop)
        if key not in self.rewards:
            env = self.envs.live  # its database state plays no part in scoring
            if session.user_side:  # the user's own calls must be in the scored trajectory
                env = Tau2Env(self.domain, self.task_id)
                for position, traffic in session.user_side.items():
                    env.record_user_side(position, traffic)
            self.rewards[key] = env.reward(messages, stop=stop).reward
            self.scored += 1
        return self.rewards[key]

    def score_key(self, messages: Sequence[Message], session: SessionEnv, stop: str) -> str:
        """Everything the evaluator reads: the calls in order (a read repeated with the same
        arguments left out: it changes neither the database nor the set of calls) with the
        user's own calls in place, and the agent's texts."""
        tools = {t["function"]["name"] for t in session.tools()}
        seen: set[str] = set()
        parts: list[Any] = [stop]
        side = session.user_side
        chat = [m for m in messages if not isinstance(m, SystemMessage)]
        for position, message in enumerate(chat):
            parts += [_calls(m) for m in side.get(position, ())]
            if not isinstance(message, AssistantMessage):
                continue
            for call in message.tool_calls:
                key = f"{call.name}:{call.arguments}"
                read = not self.envs.changes_state(("agent", call.name, "{}"))
                if call.name in tools and not (read and key in seen):
                    parts.append(key)
                seen.add(key)
            parts.append(message.content or "")
        parts += [_calls(m) for p in sorted(side) if p >= len(chat) for m in side[p]]
        return json.dumps(parts)


def _real(messages: list[Message], noisy: NoisyEnv | None) -> list[Message]:
    """The conversation with each padded tool output replaced by the real one."""
    if noisy is None:
        return messages
    real = noisy.originals
    return [
        ToolMessage(real[m.content], m.tool_call_id, name=m.name)
        if isinstance(m, ToolMessage) and m.content in real
        else m
        for m in messages
    ]


def _calls(message: Message) -> list[str]:
    if not isinstance(message, AssistantMessage):
        return []
    return [f"user:{c.name}:{c.arguments}" for c in message.tool_calls]


def run_one(
    domain: str,
    task_id: str,
    setting: Setting,
    folder: FolderChoice | None = None,
    metering: Metering | None = None,
) -> RunResult:
    """Run the oracle on one task under one setting and score it."""
    source = (folder or FolderChoice()).source()
    return TaskRunner(domain, task_id, folders=source, metering=metering).run(setting)


def run_task(
    domain: str,
    task_id: str,
    settings: Sequence[Setting],
    folder: FolderChoice | None = None,
    learned: Mapping[Setting, Experience] | None = None,
    metering: Metering | None = None,
) -> list[RunResult]:
    """Every setting on one task (one job of :func:`run_matrix`)."""
    source = (folder or FolderChoice()).source()
    runner = TaskRunner(domain, task_id, folders=source, learned=learned, metering=metering)
    return [runner.run(s) for s in settings]


def _run_task_last(
    domain: str,
    settings: Sequence[Setting],
    folder: FolderChoice,
    frozen: Mapping[Setting, Experience],
    metering: Metering,
    task_id: str,
) -> list[RunResult]:
    """:func:`run_task` with the task id last (the shared arguments of a Ray sweep first)."""
    return run_task(domain, task_id, settings, folder, frozen, metering)


def _experiences(
    settings: Sequence[Setting], learn: bool, known: Mapping[str, Experience]
) -> dict[Setting, Experience]:
    """Each setting's starting experience, by its strategy's label
    (:func:`~contextfold.core.experience.start_from`)."""
    start = {s: start_from(known, spec_label(s.strategy), learn=learn) for s in settings}
    return {s: e for s, e in start.items() if e is not None}


def run_matrix(
    domain: str,
    task_ids: Sequence[str],
    settings: Sequence[Setting],
    *,
    workers: int = 1,
    on_task: Callable[[str], None] | None = None,
    folder: FolderChoice | None = None,
    sweep: RaySweep | None = None,
    learn: bool = False,
    experience: Mapping[str, Experience] | None = None,
    learned: MutableMapping[Setting, Experience] | None = None,
    metering: Metering | None = None,
) -> list[RunResult]:
    """Every setting on every task; ``workers`` > 1 runs tasks in that many processes, a
    ``sweep`` runs each task as a Ray task (results in the same order either way). With
    ``learn``, each setting's strategies learn from the tasks before (in order, one process),
    from the entry of ``experience`` for its strategy label if there is one, into the
    setting's entry of ``learned`` (when given: what ``--save-experience`` writes); without,
    a setting whose label ``experience`` holds shares a frozen copy of it (in any process)."""
    if learn and (workers > 1 or sweep is not None):
        raise ContextFoldError("learning across tasks runs them in order in one process")
    frozen = {} if learn else _experiences(settings, False, experience or {})
    folder, metering = folder or FolderChoice(), metering or Metering()
    for setting in settings:  # a bad spec, or a missing folder, fails before any work
        build_strategy(setting.strategy, folders=FolderSource(default=folder.default))
    results: list[RunResult] = []
    if sweep is not None:
        done = (lambda i: on_task(task_ids[i])) if on_task else None
        shared = (domain, list(settings), folder, frozen, metering)
        parts = sweep.map(_run_task_last, [(t,) for t in task_ids], shared=shared, on_done=done)
        return [r for part in parts for r in part]
    if workers <= 1:
        start = _experiences(settings, True, experience or {}) if learn else frozen
        if learn and learned is not None:
            learned.update(start)
        for task_id in task_ids:
            results += run_task(domain, task_id, settings, folder, start, metering)
            if on_task is not None:
                on_task(task_id)
        return results
    with ProcessPoolExecutor(max_workers=workers) as pool:
        jobs = {
            pool.submit(run_task, domain, t, list(settings), folder, frozen, metering): t
            for t in task_ids
        }
        for job in as_completed(jobs):  # progress as tasks end, not in order
            job.result()
            if on_task is not None:
                on_task(jobs[job])
        for job in jobs:
            results += job.result()
    return results


def aggregate(results: Sequence[RunResult]) -> list[dict[str, Any]]:
    """One row per domain x setting, with exactly :data:`ROW_KEYS`; means over tasks.

    ``prompt_tokens``: prompt tokens sent over a session, cumulative; ``peak_context_tokens``: the
    largest prompt of a session; ``cost_usd``: its cost under the matrix's price table
    (:class:`Metering`).
    """
    groups: dict[tuple[str, Setting], list[RunResult]] = {}
    for r in results:
        groups.setdefault((r.domain, r.setting), []).append(r)
    rows = []
    for (domain, setting), runs in groups.items():
        n = len(runs)
        rows.append(
            {
                "strategy": setting.strategy,
                "budget": setting.budget,
                "noisy": setting.noisy,
                "tool_schemas": setting.tool_schemas,
                "domain": domain,
                "tasks": n,
                "reward_mean": sum(r.reward for r in runs) / n,
                "redundant_calls": sum(r.redundant_calls for r in runs) / n,
                "lost_user_values": sum(r.lost_user_values for r in runs) / n,
                "lost_tool_values": sum(r.lost_tool_values for r in runs) / n,
                "refetched_values": sum(r.refetched_values for r in runs) / n,
                "steps": sum(r.steps for r in runs) / n,
                "prompt_tokens": sum(r.prompt_tokens for r in runs) / n,
                "peak_context_tokens": sum(r.peak_context_tokens for r in runs) / n,
                "forced_compactions": sum(r.forced_compactions for r in runs) / n,
                "cost_usd": sum(r.cost_usd for r in runs) / n,
                **{k: sum(r.folds.get(k, 0.0) for r in runs) / n for k in FOLD_KEYS},
                "total_cost_usd": sum(r.cost_usd + r.folds.get("fold_cost_usd", 0.0) for r in runs)
                / n,
            }
        )
    return rows


def result_json(result: RunResult) -> dict[str, Any]:
    """One run as JSON (for logs and plots)."""
    return {**asdict(result), "setting": asdict(result.setting)}
