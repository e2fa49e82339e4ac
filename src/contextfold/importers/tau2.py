"""tau2-bench results files: ``{timestamp, info, tasks, simulations}``, one trajectory per
simulation.

The system message is the one tau2's agent was given: its instructions around the domain policy
(``info.environment_info.policy``); the solo agent (``llm_agent_solo``, no user simulator) also
gets the task's ticket. Tool calls the user simulator made on its own device (telecom) and their
results are dropped: the agent never saw them. Tool call arguments are stored as dicts and are
written back as JSON text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contextfold.core.errors import ImportFormatError
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.importers.base import Trajectory
from contextfold.importers.probe import Format, Probe
from contextfold.importers.steps import Labeled, as_outcome, group_steps

__all__ = ["AGENT_INSTRUCTION", "FORMAT", "SOLO_AGENT_INSTRUCTION", "read", "system_prompt"]

AGENT_INSTRUCTION = """\
You are a customer service agent that helps the user according to the <policy> provided below.
In each turn you can either:
- Send a message to the user.
- Make a tool call.
You cannot do both at the same time.

Try to be helpful and always follow the policy. Always make sure you generate valid JSON only."""

SOLO_AGENT_INSTRUCTION = """\
You are a customer service agent that helps the user according to the <policy> provided below.
You will be provided with a ticket that contains the user's request.
You will need to plan and call the appropriate tools to solve the ticket.

You cannot communicate with the user, only make tool calls.
Stop when you consider that you have solved the ticket.
To do so, send a message containing a single tool call to the `done` tool. \
Do not include any other tool calls in this last message.

Always follow the policy. Always make sure you generate valid JSON only."""


def system_prompt(policy: str, *, ticket: str | None = None, solo: bool = False) -> str:
    """tau2's agent system prompt (``LLMAgent``, or ``LLMSoloAgent`` with its ticket)."""
    instruction = SOLO_AGENT_INSTRUCTION if solo else AGENT_INSTRUCTION
    text = f"<instructions>\n{instruction}\n</instructions>\n<policy>\n{policy}\n</policy>"
    return f"{text}\n<ticket>\n{ticket}\n</ticket>" if solo else text


@dataclass(slots=True)
class _File:
    path: Path
    domain: str
    policy: str | None
    agent: str | None
    llm: str | None
    tickets: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return str(self.path)


def read(path: Path, data: Any) -> Iterator[Trajectory | ImportFormatError]:
    """Each simulation as a trajectory, or the error that stops it from being read."""
    try:
        ctx, simulations = _parse_file(path, data)
    except ImportFormatError as exc:
        yield exc
        return
    for index, simulation in enumerate(simulations):
        try:
            yield _simulation(ctx, index, simulation)
        except ImportFormatError as exc:
            yield exc


def _parse_file(path: Path, data: Any) -> tuple[_File, list[Any]]:
    name = str(path)
    simulations, info = data.get("simulations"), data.get("info")
    if not isinstance(simulations, list):
        raise ImportFormatError(name, "simulations", "expected a list of simulations")
    env = _mapping(info, "environment_info")
    agent = _mapping(info, "agent_info")
    domain, policy = env.get("domain_name"), env.get("policy")
    if not isinstance(domain, str) or not (policy is None or isinstance(policy, str)):
        raise ImportFormatError(
            name, "info.environment_info", "needs a string domain_name and a string policy"
        )
    tasks = data.get("tasks")
    tickets = {
        str(t.get("id")): t.get("ticket")
        for t in (tasks if isinstance(tasks, list) else [])
        if isinstance(t, Mapping)
    }
    impl, llm = agent.get("implementation"), agent.get("llm")
    return _File(path, domain, policy, _opt_str(impl), _opt_str(llm), tickets), simulations


def _simulation(ctx: _File, index: int, sim: Any) -> Trajectory:
    where = f"simulations[{index}]"
    if not isinstance(sim, Mapping):
        raise ImportFormatError(ctx.name, where, "a simulation must be an object")
    task_id, trial = sim.get("task_id"), sim.get("trial", 0)
    if not isinstance(task_id, str | int) or not isinstance(trial, int):
        raise ImportFormatError(ctx.name, where, "needs a task_id and an integer trial")
    items, dropped = _messages(ctx.name, where, sim.get("messages"))
    grouped = group_steps(ctx.name, items, system=_system(ctx, str(task_id)))
    reward = _mapping(sim, "reward_info").get("reward")
    meta = _meta(ctx, index, sim, task_id, trial)
    meta["user_tool_messages_dropped"] = dropped
    if grouped.dropped_calls:
        meta["unanswered_calls_dropped"] = grouped.dropped_calls
    return Trajectory(
        id=f"{ctx.domain}:{task_id}:trial{trial}@{Path(ctx.name).stem}",
        source=ctx.name,
        system=grouped.system,
        steps=grouped.steps,
        outcome=as_outcome(ctx.name, f"{where}.reward_info.reward", reward),
        meta=meta,
    )


def _meta(
    ctx: _File, index: int, sim: Mapping[str, Any], task_id: str | int, trial: int
) -> dict[str, Any]:
    return {
        "format": "tau2",
        "file": ctx.path.name,
        "index": index,
        "domain": ctx.domain,
        "task_id": task_id,
        "trial": trial,
        "termination_reason": sim.get("termination_reason"),
        "simulation_id": sim.get("id"),
        "agent": ctx.agent,
        "agent_llm": ctx.llm,
    }


def _system(ctx: _File, task_id: str) -> SystemMessage | None:
    if ctx.policy is None:
        return None
    if ctx.agent == "llm_agent_solo":  # tau2 formats the ticket as is (None prints "None")
        ticket = ctx.tickets.get(task_id)
        return SystemMessage(system_prompt(ctx.policy, ticket=str(ticket), solo=True))
    return SystemMessage(system_prompt(ctx.policy))


def _messages(path: str, where: str, raw: Any) -> tuple[list[Labeled], int]:
    """The messages the agent saw, and how many user-side tool messages were dropped."""
    if not isinstance(raw, list):
        raise ImportFormatError(path, f"{where}.messages", "expected a list of messages")
    items: list[Labeled] = []
    names: dict[str, str] = {}
    user_calls: set[str] = set()
    dropped = 0
    for i, data in enumerate(raw):
        label = f"{where}.messages[{i}]"
        if not isinstance(data, Mapping):
            raise ImportFormatError(path, label, "a message must be an object")
        message = _message(path, label, data, names, user_calls)
        if message is None:
            dropped += 1
        else:
            items.append((label, message))
    return items, dropped


def _message(
    path: str, label: str, data: Mapping[str, Any], names: dict[str, str], user_calls: set[str]
) -> Message | None:
    role = data.get("role")
    if role == "assistant":
        message = _assistant(path, label, data)
        names.update((c.id, c.name) for c in message.tool_calls)
        return message
    if role == "user":
        user_calls.update(c.id for c in _calls(path, label, data))
        text = _text(path, label, data)
        return UserMessage(text) if text else None
    if role == "tool":
        call_id = data.get("id")
        if not isinstance(call_id, str):
            raise ImportFormatError(path, label, "tool message has no string 'id'")
        if data.get("requestor") == "user" or call_id in user_calls:
            return None
        return ToolMessage(_text(path, label, data), call_id, name=names.get(call_id))
    raise ImportFormatError(path, label, f"unknown message role {role!r}")


def _assistant(path: str, label: str, data: Mapping[str, Any]) -> AssistantMessage:
    calls = _calls(path, label, data)
    text = _text(path, label, data) or None
    reasoning = data.get("reasoning")
    if not (reasoning is None or isinstance(reasoning, str)):
        raise ImportFormatError(path, label, "assistant 'reasoning' must be a string")
    content = text if text is not None or calls else ""
    return AssistantMessage(content, tool_calls=calls, reasoning=reasoning or None)


def _calls(path: str, label: str, data: Mapping[str, Any]) -> tuple[ToolCall, ...]:
    raw = data.get("tool_calls") or []
    if not isinstance(raw, list):
        raise ImportFormatError(path, label, "'tool_calls' must be a list")
    return tuple(_call(path, f"{label}.tool_calls[{j}]", c) for j, c in enumerate(raw))


def _call(path: str, label: str, raw: Any) -> ToolCall:
    if not isinstance(raw, Mapping):
        raise ImportFormatError(path, label, "a tool call must be an object")
    call_id, name, args = raw.get("id"), raw.get("name"), raw.get("arguments", {})
    if not isinstance(call_id, str) or not isinstance(name, str) or not name:
        raise ImportFormatError(path, label, "a tool call needs a string 'id' and 'name'")
    if not isinstance(args, str):
        args = json.dumps(args, ensure_ascii=False)
    return ToolCall(call_id, name, args)


def _text(path: str, label: str, data: Mapping[str, Any]) -> str:
    content = data.get("content")
    if content is None or isinstance(content, str):
        return content or ""
    raise ImportFormatError(path, label, f"content must be a string, got {type(content).__name__}")


def _mapping(data: Any, key: str) -> Mapping[str, Any]:
    value = data.get(key) if isinstance(data, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _claims(probe: Probe) -> bool:
    data = probe.document
    return isinstance(data, Mapping) and "simulations" in data and "tasks" in data


FORMAT = Format(
    name="tau2",
    summary="tau2-bench results JSON {info, tasks, simulations}: each simulation",
    suffixes=(".json",),
    claims=_claims,
    read=lambda probe: read(probe.path, probe.document),
)
