"""Argument availability: did the view a strategy rendered hold what the next call used?

For every recorded assistant step with tool calls, the values its arguments use
(:func:`contextfold.core.argvalues.call_values`) that the agent **learned from the context**
are the ones it *needs*: a value is learned from the context when a user message or a tool
result of an earlier step holds it verbatim (:func:`~contextfold.core.verbatim.found`)
and the system prompt does not (every strategy keeps the system prompt, and a value the agent
wrote first itself came from neither). Each needed value is then checked against the view the
strategy rendered just before that step:

- **in view**: a user message or tool result of the view that renders one of the steps holding
  the value (by provenance) shows it verbatim: the same message object, or a transformed one
  (a labelled output, a clipped one) whose text still holds it;
- **restorable**: not in view, but an elision with a restore path covers a step holding it;
- **lost**: neither.

:class:`ArgIndex` finds the needed values of a trajectory once, whatever the strategy: each
evidence message is split into its alphanumeric runs once, and a value is looked for with the
verbatim regex only in the messages that hold all of its runs. :class:`ArgTally` checks one
strategy's views by identity and provenance, and reads a message's text only when it is not
shown as recorded. Per strategy and per trajectory the replay reports ``args_needed`` (a count)
and ``args_in_view``, ``args_restorable``, ``args_lost`` (shares of it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextfold.core.argvalues import call_values
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

__all__ = ["ARGS_KEYS", "ArgIndex", "ArgTally", "Need", "args_summary"]

_Shown = UserMessage | ToolMessage

ARGS_KEYS = ("args_needed", "args_in_view", "args_restorable", "args_lost")


@dataclass(frozen=True, slots=True)
class Need:
    """One value a call needs, and where the context held it before the call."""

    value: Leaf
    messages: tuple[Message, ...]
    """The user messages and tool results of earlier steps that hold it."""
    steps: frozenset[int]
    """Their steps."""


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
            step.index: list(
                dict.fromkeys(v for c in step.message.tool_calls for v in call_values(c))
            )
            for step in steps
            if isinstance(step.message, AssistantMessage) and step.message.tool_calls
        }
        evidence = [
            _Evidence(step.index, m, PreparedText(m.content))
            for step in steps
            for m in step.messages
            if isinstance(m, UserMessage | ToolMessage)
        ]
        holders = _Holders(evidence, system.content if system else "", calls.values())
        index = cls()
        for step, values in calls.items():
            needs = tuple(n for n in (holders.need(v, step) for v in values) if n is not None)
            if needs:
                index.needs[step] = needs
        return index


class _Holders:
    """For each value, the evidence messages holding it (searched once per value, among the
    messages holding its rarest alphanumeric run: only runs some value has are indexed)."""

    def __init__(
        self, evidence: list[_Evidence], system: str, values: Iterable[Iterable[Leaf]]
    ) -> None:
        self.evidence, self.system = evidence, PreparedText(system)
        self._memo: dict[Leaf, list[_Evidence]] = {}
        wanted = frozenset(r for vs in values for v in vs for r in value_runs(v))
        self._postings: dict[bytes, list[_Evidence]] = {}
        for e in evidence:
            for run in e.text.runs & wanted:
                self._postings.setdefault(run, []).append(e)

    def holding(self, value: Leaf) -> list[_Evidence]:
        hit = self._memo.get(value)
        if hit is None:
            hit = self._memo[value] = self._search(value)
        return hit

    def _search(self, value: Leaf) -> list[_Evidence]:
        runs = value_runs(value)
        if self.system.holds(value, runs):
            return []  # the system prompt gave it: every view keeps that
        lists = [self._postings.get(r, []) for r in runs]
        candidates = min(lists, key=len) if lists else self.evidence
        return [e for e in candidates if e.text.holds(value, runs)]

    def need(self, value: Leaf, step: int) -> Need | None:
        before = [e for e in self.holding(value) if e.step < step]
        if not before:
            return None
        return Need(value, tuple(e.message for e in before), frozenset(e.step for e in before))


@dataclass(slots=True)
class ArgTally:
    """Checks one strategy's views of one trajectory against an :class:`ArgIndex`."""

    index: ArgIndex
    needed: int = 0
    in_view: int = 0
    restorable: int = 0
    lost: int = 0
    _prepared: dict[Message, PreparedText] = field(default_factory=dict)

    def check(self, step: int, view: View) -> None:
        """Check the view rendered just before the assistant step ``step``."""
        needs = self.index.needs.get(step)
        if not needs:
            return
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
            if self._in_text(need, by_step):
                self.in_view += 1
                continue
            if elided is None:
                elided = {s for e in view.elisions if e.restore is not None for s in e.steps}
            if need.steps & elided:
                self.restorable += 1
            else:
                self.lost += 1

    def _in_text(self, need: Need, by_step: Mapping[int, list[_Shown]]) -> bool:
        runs = value_runs(need.value)
        for step in need.steps:
            for message in by_step.get(step, ()):
                text = self._prepared.get(message)
                if text is None:
                    text = self._prepared[message] = PreparedText(message.content)
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


def _evidence_by_step(view: View) -> dict[int, list[_Shown]]:
    """The view's user messages and tool results, by the steps they render."""
    out: dict[int, list[_Shown]] = {}
    for message, prov in zip(view.messages, view.provenance, strict=True):
        if isinstance(message, UserMessage | ToolMessage):
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
