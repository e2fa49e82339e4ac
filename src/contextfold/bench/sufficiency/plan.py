"""What the oracle must do for a task, and where each value it needs comes from.

A :class:`Plan` is the task's ground-truth actions completed with the lookups a real agent makes
to learn what they need, found by a dry run on a private copy of the environment.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from contextfold.bench.sufficiency.lookup import Call, CallFinder, arguments_key
from contextfold.core.verbatim import Leaf, available, found, leaves
from contextfold.envs.tau2 import Tau2Env

__all__ = ["Action", "Fact", "Plan", "build_plan", "informative", "user_facts"]

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True, slots=True)
class Fact:
    """One sentence the simulated user knows, and the section of the scenario it is from."""

    text: str
    section: Literal["reason", "known", "instructions"]


@dataclass(frozen=True, slots=True)
class Action:
    """One step of the plan: a call by the agent, or one the user makes on their own device."""

    name: str
    arguments: Mapping[str, Any]
    side: Literal["agent", "user"]
    kind: Literal["gold", "lookup"]
    read: bool
    """An agent tool that changes nothing (a read, or ``calculate``): calling it again is a way
    to recover a value it returned."""
    needs: tuple[Leaf, ...]
    """Checked values among its arguments: each must be available before the call."""
    output: str
    """Its output in the dry run."""


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything the oracle and the scripted user know about one task.

    The sources of a value: the user's **facts** (reason for the call, known info, task
    instructions; never the unknown info), which the user states when asked, and every earlier
    action's output (the dry run records them). A value found in neither is looked up: among the
    domain's read tools called with arguments the agent already has, a call whose output holds it
    is inserted before the action; a second level of lookups is tried when one is not enough
    (telecom: phone number -> customer -> line id).

    Only **checked** values must be available in the view: a value with a source that is
    informative (:func:`informative`: not a number below 10, not a string under 3 characters, not
    in the domain policy or the tool schemas, which the agent knows). Values without a source
    (totals the agent computes, a free-text summary) are agent-made and not checked.
    """

    domain: str
    task_id: str
    opening: str
    """The user's first message: the reason for the call."""
    facts: tuple[Fact, ...]
    actions: tuple[Action, ...]
    communicate: tuple[str, ...]
    """What the agent must tell the user (``communicate_info``)."""
    communicate_needs: tuple[Leaf, ...]
    """The checked ones among them (they must be in the view before they are said)."""
    free: tuple[Leaf, ...]
    """Argument values no source holds (agent-made): not checked."""

    @property
    def checked(self) -> frozenset[Leaf]:
        """Every checked value of the plan."""
        out = {v for a in self.actions for v in a.needs}
        return frozenset(out | set(self.communicate_needs))


def user_facts(raw_task: Any) -> tuple[str, tuple[Fact, ...]]:
    """The opening message and the sentences of the user's scenario (unknown info excluded)."""
    ins = raw_task.user_scenario.instructions
    if isinstance(ins, str):
        return ins.strip(), tuple(Fact(s, "known") for s in _sentences(ins))
    sections: list[tuple[Literal["reason", "known", "instructions"], str]] = [
        ("known", ins.known_info or ""),
        ("instructions", ins.task_instructions or ""),
        ("reason", ins.reason_for_call or ""),
    ]
    facts = tuple(Fact(s, name) for name, text in sections for s in _sentences(text))
    return (ins.reason_for_call or "").strip(), facts


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if len(s.strip()) > 1]


def informative(value: Leaf, policy: str) -> bool:
    """Whether a value is worth checking: not tiny, not the agent's own policy knowledge."""
    if isinstance(value, int | float):
        return abs(value) >= 10 and not found(value, policy)
    return len(value.strip()) >= 3 and not found(value, policy)


@cache
def build_plan(domain: str, task_id: str) -> Plan:
    """The plan of one task (cached: it depends on the task only)."""
    env = Tau2Env(domain, task_id)
    criteria = env.task.raw.evaluation_criteria
    opening, facts = user_facts(env.task.raw)
    planner = _Planner(env, facts, criteria.actions or [])
    for gold in criteria.actions or []:
        planner.add(
            gold.name, dict(gold.arguments), "user" if gold.requestor == "user" else "agent"
        )
    infos = tuple(str(c) for c in criteria.communicate_info or ())
    needs = tuple(c for c in infos if planner.checkable(c) and available(c, planner.known))
    return Plan(
        domain,
        str(task_id),
        opening,
        facts,
        tuple(planner.actions),
        infos,
        needs,
        tuple(planner.free),
    )


class _Planner:
    """Runs the ground truth on a private env, inserting the lookups it needs."""

    def __init__(self, env: Tau2Env, facts: Sequence[Fact], gold: Sequence[Any]) -> None:
        self.env = env
        self.kit = env.tau2_env.tools
        self.policy = env.policy + json.dumps(env.tools()) + json.dumps(env.user_tools())
        self.known: list[str] = [f.text for f in facts]
        self.finder = CallFinder(env, gold)
        self.actions: list[Action] = []
        self.free: list[Leaf] = []

    def _is_read(self, name: str) -> bool:
        """A tool that changes nothing: tau2's read tools and its generic ones (calculate)."""
        return str(self.kit.tool_type(name).value) in ("read", "generic")

    def checkable(self, value: Leaf) -> bool:
        """Whether the value is informative for this domain (see :func:`informative`)."""
        return informative(value, self.policy)

    def add(self, name: str, arguments: dict[str, Any], side: Literal["agent", "user"]) -> None:
        """Plan one ground-truth action: look up what it needs, then run it."""
        needs: list[Leaf] = []
        if side == "agent":
            for value in dict.fromkeys(leaves(arguments)):
                if not self.checkable(value):
                    continue
                if available(value, self.known) or self._look_up(value):
                    needs.append(value)
                else:
                    self.free.append(value)
            output = self.env.call(name, arguments)
        else:
            output = self.env.call_user_tool(name, arguments)
        read = side == "agent" and self._is_read(name)
        self.actions.append(Action(name, arguments, side, "gold", read, tuple(needs), output))
        self.known.append(output)

    def _look_up(self, value: Leaf) -> bool:
        """Insert the read calls that reveal ``value`` (one or two levels); False if none."""
        if not isinstance(value, str) or any(c.isspace() for c in value):
            return False  # numbers and sentences are computed or composed, never looked up
        done = {arguments_key(a.name, a.arguments) for a in self.actions}
        first: dict[str, tuple[Call, str]] = {}
        for call in self.finder.candidates(self.known, done):
            output = self._run(call)
            if found(value, output):
                self._insert([call])
                return True
            if not output.startswith("Error"):
                first[arguments_key(*call)] = (call, output)
        extra = [output for _, output in first.values()]
        for call in self.finder.candidates([*self.known, *extra], done | set(first)):
            if found(value, self._run(call)):
                feeders = [c for c, output in first.values() if self._feeds(output, call[1])]
                self._insert([*feeders[:2], call])
                return True
        return False

    def _feeds(self, output: str, arguments: Mapping[str, Any]) -> bool:
        return any(
            found(v, output) and not available(v, self.known) for v in leaves(dict(arguments))
        )

    def _insert(self, calls: Sequence[Call]) -> None:
        for name, arguments in calls:
            needs = tuple(v for v in leaves(arguments) if self.checkable(v))
            output = self._run((name, arguments))
            self.actions.append(Action(name, arguments, "agent", "lookup", True, needs, output))
            self.known.append(output)

    def _run(self, call: Call) -> str:
        return self.env.call(call[0], call[1])
