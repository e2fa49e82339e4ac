"""Argument availability: did the view a strategy rendered hold what the next call used?

A value a recorded call uses (:func:`contextfold.core.argvalues.call_values`) is *needed* when
an earlier user message or tool result held it verbatim and the system prompt did not; each
needed value is then **in view**, **restorable** (an elision with a restore path covers a
step holding it) or **lost** in the view rendered just before the call. :class:`ArgIndex`
finds a trajectory's needed values once for every strategy; :class:`ArgTally` checks one
strategy's views (docs/measure/measures.md, "Argument availability").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextfold.core.argvalues import call_values, shell_call, shell_text
from contextfold.core.history import Step
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from contextfold.core.prepared import PreparedText, value_runs
from contextfold.core.verbatim import Leaf
from contextfold.core.view import View

__all__ = [
    "ARGS_KEYS",
    "ArgIndex",
    "ArgTally",
    "Found",
    "Need",
    "Places",
    "Wanted",
    "args_summary",
]

_Shown = UserMessage | ToolMessage | AssistantMessage

ARGS_KEYS = ("args_needed", "args_in_view", "args_restorable", "args_lost")


@dataclass(frozen=True, slots=True)
class Need:
    """One value a call needs, and where the context held it before the call."""

    value: Leaf
    messages: tuple[Message, ...]
    """The holders: the user messages and tool results of earlier steps that hold it (and,
    for a shell command's value, the agent's earlier messages whose shell calls hold it)."""
    steps: frozenset[int]
    """Their steps."""
    commands: bool = False
    """A shell command's value: the agent's own earlier commands count as holders."""


@dataclass(slots=True)
class _Evidence:
    step: int
    message: Message
    text: PreparedText


@dataclass(slots=True)
class ArgIndex:
    """The values each recorded call needs, for one trajectory (shared by all strategies)."""

    needs: dict[int, tuple[Need, ...]] = field(default_factory=dict)
    """Assistant step index -> the values its calls need."""

    @classmethod
    def build(cls, system: SystemMessage | None, steps: Sequence[Step]) -> ArgIndex:
        calls = {
            step.index: _call_values(step.message)
            for step in steps
            if isinstance(step.message, AssistantMessage) and step.message.tool_calls
        }
        evidence = [
            _Evidence(step.index, m, PreparedText(m.content))
            for step in steps
            for m in step.messages
            if isinstance(m, UserMessage | ToolMessage)
        ]
        commands = [
            _Evidence(step.index, step.message, PreparedText(shell_text(step.message)))
            for step in steps
            if isinstance(step.message, AssistantMessage) and shell_text(step.message)
        ]
        values = [list(vs) for vs in calls.values()]
        holders = _Holders(evidence, commands, system.content if system else "", values)
        index = cls()
        for step, called in calls.items():
            found = (holders.need(v, step, commands=shell) for v, shell in called.items())
            needs = tuple(n for n in found if n is not None)
            if needs:
                index.needs[step] = needs
        return index


def _call_values(message: AssistantMessage) -> dict[Leaf, bool]:
    """The values ``message``'s calls use, in order, each with whether a shell command uses
    it (then the agent's earlier commands hold it too)."""
    out: dict[Leaf, bool] = {}
    for call in message.tool_calls:
        for value in call_values(call):
            out[value] = out.get(value, False) or shell_call(call)
    return out


class _Holders:
    """For each value, the evidence messages holding it (searched once per value, among the
    messages holding its rarest alphanumeric run: only runs some value has are indexed)."""

    def __init__(
        self,
        evidence: list[_Evidence],
        commands: list[_Evidence],
        system: str,
        values: Iterable[Iterable[Leaf]],
    ) -> None:
        self.system = PreparedText(system)
        wanted = frozenset(r for vs in values for v in vs for r in value_runs(v))
        self._context = _Postings(evidence, wanted)
        self._commands = _Postings(commands, wanted)

    def need(self, value: Leaf, step: int, *, commands: bool) -> Need | None:
        """The value as the call at ``step`` needs it; None when it was not learned from the
        context (no earlier user message or tool result holds it, or the system prompt does)."""
        runs = value_runs(value)
        if self.system.holds(value, runs):
            return None  # the system prompt gave it: every view keeps that
        before = [e for e in self._context.holding(value, runs) if e.step < step]
        if not before:
            return None
        if commands:
            before += [e for e in self._commands.holding(value, runs) if e.step < step]
        messages = tuple(e.message for e in before)
        return Need(value, messages, frozenset(e.step for e in before), commands)


class _Postings:
    """Evidence messages by the alphanumeric runs some value has; each value searched once."""

    def __init__(self, evidence: list[_Evidence], wanted: frozenset[bytes]) -> None:
        self.evidence = evidence
        self._memo: dict[Leaf, list[_Evidence]] = {}
        self._postings: dict[bytes, list[_Evidence]] = {}
        for e in evidence:
            for run in e.text.runs & wanted:
                self._postings.setdefault(run, []).append(e)

    def holding(self, value: Leaf, runs: frozenset[bytes]) -> list[_Evidence]:
        hit = self._memo.get(value)
        if hit is None:
            lists = [self._postings.get(r, []) for r in runs]
            candidates = min(lists, key=len) if lists else self.evidence
            hit = self._memo[value] = [e for e in candidates if e.text.holds(value, runs)]
        return hit


@dataclass(slots=True)
class Places:
    """Where each recorded step sits in a replayed history that restores were added to (a
    restore step shifts every recorded step after it), and which steps restores brought back."""

    shift: dict[int, int] = field(default_factory=dict)
    """Recorded index -> history index, for the recorded steps after the first restore."""
    restored: dict[int, list[int]] = field(default_factory=dict)
    """History index of a step -> the restore steps whose results show it again."""

    def steps(self, recorded: frozenset[int]) -> frozenset[int]:
        """The history steps showing what the ``recorded`` steps hold: the steps themselves,
        and the restores of them."""
        if not self.shift and not self.restored:
            return recorded
        at = frozenset(self.shift.get(s, s) for s in recorded)
        return at.union(*(self.restored.get(s, ()) for s in at))


@dataclass(frozen=True, slots=True)
class Wanted:
    """A needed value the view left out but can give back: the history steps holding it
    whose elisions have a restore path."""

    value: Leaf
    steps: frozenset[int]


@dataclass(frozen=True, slots=True)
class Found:
    """What one check found the view leaves out: the needed values it can give back, and
    those it lost (neither in view nor restorable)."""

    restorable: list[Wanted] = field(default_factory=list)
    lost: list[Need] = field(default_factory=list)


@dataclass(slots=True)
class ArgTally:
    """Checks one strategy's views of one trajectory against an :class:`ArgIndex`."""

    index: ArgIndex
    places: Places = field(default_factory=Places)
    needed: int = 0
    in_view: int = 0
    restorable: int = 0
    lost: int = 0
    _prepared: dict[Message, PreparedText] = field(default_factory=dict)

    def check(self, step: int, view: View) -> Found:
        """Check the view rendered just before the recorded assistant step ``step``; returns
        the values it needs that the view can give back (restorable) and those it lost."""
        found = Found()
        needs = self.index.needs.get(step)
        if not needs:
            return found
        shown = {id(m) for m in view.messages}
        by_step: dict[int, list[_Shown]] | None = None
        elided: set[int] | None = None
        for need in needs:
            self.needed += 1
            if any(id(m) in shown for m in need.messages):
                self.in_view += 1
                continue
            if by_step is None:
                by_step = _evidence_by_step(view)
            holders = self.places.steps(need.steps)
            if self._in_text(need, holders, by_step):
                self.in_view += 1
                continue
            if elided is None:
                elided = {s for e in view.elisions if e.restore is not None for s in e.steps}
            if holders & elided:
                self.restorable += 1
                found.restorable.append(Wanted(need.value, frozenset(holders & elided)))
            else:
                self.lost += 1
                found.lost.append(need)
        return found

    def _in_text(
        self, need: Need, holders: frozenset[int], by_step: Mapping[int, list[_Shown]]
    ) -> bool:
        runs = value_runs(need.value)
        for step in holders:
            for message in by_step.get(step, ()):
                if isinstance(message, AssistantMessage) and not need.commands:
                    continue  # the agent's own call holds no evidence for it
                text = self._prepared.get(message)
                if text is None:
                    text = self._prepared[message] = PreparedText(_text(message))
                if text.holds(need.value, runs):
                    return True
        return False

    def row(self) -> dict[str, Any]:
        """The trajectory's figures: ``args_needed`` (count) and the three shares."""
        n = self.needed
        return {
            "args_needed": n,
            "args_in_view": self.in_view / n if n else 0.0,
            "args_restorable": self.restorable / n if n else 0.0,
            "args_lost": self.lost / n if n else 0.0,
        }


def _text(message: _Shown) -> str:
    """Where a shown message holds values: an agent's message in its shell commands."""
    return shell_text(message) if isinstance(message, AssistantMessage) else message.content


def _evidence_by_step(view: View) -> dict[int, list[_Shown]]:
    """The view's user messages, tool results and agent messages, by the steps they render."""
    out: dict[int, list[_Shown]] = {}
    for message, prov in zip(view.messages, view.provenance, strict=True):
        if isinstance(message, UserMessage | ToolMessage | AssistantMessage):
            for step in prov.steps:
                out.setdefault(step, []).append(message)
    return out


def args_summary(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Totals over trajectories: ``args_needed`` summed, the shares weighted by it."""
    data = [(r["args_needed"], r) for r in rows]
    total = sum(n for n, _ in data)
    out: dict[str, Any] = {"args_needed": total}
    for key in ARGS_KEYS[1:]:
        out[key] = sum(n * r[key] for n, r in data) / total if total else 0.0
    return out
