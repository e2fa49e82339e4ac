"""How the oracle gets back values its view has lost: one round per model call.

Recovery does what a real agent would (restore a stub, ask the user, read again), so its
redundant calls and re-fetched values price what a strategy's removals cost the agent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextfold.bench.sufficiency.dialog import ASK, label_for
from contextfold.bench.sufficiency.plan import Action, Fact, Plan
from contextfold.core.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from contextfold.core.verbatim import Leaf, available, evidence, found

__all__ = ["Recovery", "RecoveryStats", "call_key"]

_STUBS = {
    "restore": (re.compile(r'restore\(step=(\d+)(?:, lines="(\d+-\d+)")?\)'), "step"),
    "recall": (re.compile(r"recall\(id=(\d+)\)()"), "id"),
}

NewCall = Callable[[str, Mapping[str, Any], str], ToolCall]
"""Makes a tool call (name, arguments, the plan output it brings back)."""


@dataclass(slots=True)
class RecoveryStats:
    """What recovery cost over a session."""

    redundant_calls: int = 0
    restores: int = 0
    rereads: int = 0
    reasks: int = 0
    first_asks: int = 0
    refetched_values: int = 0
    """Values recovered by a redundant call (restore, recall, a repeated read or ask)."""


@dataclass(slots=True)
class _Candidate:
    kind: str  # "restore", "recall", "ask", "read"
    key: str
    call: tuple[str, dict[str, Any]] | None = None
    fact: Fact | None = None
    output: str = ""
    """The plan output the call brings back (so later rounds know which values it holds)."""
    action: Action | None = None
    values: list[Leaf] = field(default_factory=list)


def call_key(name: str, arguments: Mapping[str, Any]) -> str:
    """A call's identity: its tool and canonical arguments."""
    return f"{name}:{json.dumps(dict(arguments), sort_keys=True, ensure_ascii=False)}"


class Recovery:
    """Recovery state of one session; :meth:`reset` starts a new target action.

    For each missing value the first candidate not known to fail is chosen:

    1. **restore / recall**: the view shows a stub (``restore(step=N)``, ``recall(id=N)``) in
       place of a tool result that held the value, and the strategy offers that tool; a result
       cut to some of its lines names each run left out (``restore(step=N, lines="a-b")``),
       tried in the order shown, one a round;
    2. **ask**: the value is in one of the user's facts;
    3. **read again**: an earlier read-only call of the plan returned it (its own arguments must
       be available first: missing ones join the round and are recovered the same way).

    Asks go first when a missing value needs one, all in one message (the latest user message is
    the one thing every view keeps); else the round's calls go out together (parallel tool calls).
    At the next call the round's results are judged in the view: a call whose shown result lacks
    the value (a clipped output) is **dead** for that value, and so is an ask whose answer lacks
    it. When a value an earlier round recovered for this action is missing again (a sliding window
    pushed it out), the view is **sliding**: the round fetches every value the action needs, so
    that one ask and one step hold them all. After ``max_rounds`` rounds, or with nothing left to
    try, recovery gives up. Every recovery that repeats earlier work (each restore or recall, each
    read made before with the same arguments, each fact asked before) is a redundant call; the
    values it goes after are **re-fetched**.
    """

    def __init__(self, plan: Plan, new_call: NewCall, *, max_rounds: int = 6) -> None:
        self.plan, self.new_call, self.max_rounds = plan, new_call, max_rounds
        self.stats = RecoveryStats()
        self.made: set[str] = set()
        """Keys of the env calls made so far."""
        self.outputs: dict[str, str] = {}
        """Call id -> the plan output that call brought back."""
        self._asked: set[str] = set()
        self.reset()

    def reset(self) -> None:
        """Forget the previous target's rounds (the session's calls and asks stay)."""
        self._dead: set[tuple[str, Leaf]] = set()
        self._last: list[tuple[str, str, list[Leaf]]] = []
        self._sought: set[Leaf] = set()  # values earlier rounds of this target went after
        self._got: set[Leaf] = set()  # ... and that were then in the view
        self.rounds = 0

    def round(
        self,
        needs: Sequence[Leaf],
        view: Sequence[Message],
        names: frozenset[str],
        done: Sequence[Action],
    ) -> AssistantMessage | None:
        """The next recovery message for ``needs``; None when recovery gives up."""
        texts = evidence(view)
        self._judge(view)
        missing = [v for v in needs if not available(v, texts)]
        self._got.update(v for v in self._sought if v not in missing)
        if self.rounds >= self.max_rounds:
            return None
        sliding = any(v in self._got for v in missing)
        targets = list(needs) if sliding else missing
        calls, asks = self._choose(targets, view, texts, names, done)
        urgent = any(not available(v, texts) for a in asks for v in a.values)
        if not urgent and not calls:
            return None
        self.rounds += 1
        self._sought.update(targets)
        return self._ask(asks) if urgent else self._calls(calls)

    def _judge(self, view: Sequence[Message]) -> None:
        """Mark the last round's candidates whose shown result lacks a value as dead."""
        users = [m for m in view if isinstance(m, UserMessage)]
        shown = {m.tool_call_id: m.content for m in view if isinstance(m, ToolMessage)}
        for call_id, key, values in self._last:
            text = shown.get(call_id) if call_id else (users[-1].content if users else None)
            if text is not None:
                self._dead.update((key, v) for v in values if not found(v, text))
        self._last = []

    def _choose(
        self,
        targets: list[Leaf],
        view: Sequence[Message],
        texts: list[str],
        names: frozenset[str],
        done: Sequence[Action],
    ) -> tuple[list[_Candidate], list[_Candidate]]:
        """The calls and the asks of one round: for each target, a candidate that can go out
        now, else the missing arguments of the first read that could (recovered first)."""
        chosen: dict[str, _Candidate] = {}
        pending, seen = list(targets), set(targets)
        missing = set(targets)
        while pending:
            value = pending.pop(0)
            options = list(self._candidates(value, view, names, done, ask=value in missing))
            lacking = [self._lacking(c, texts) for c in options]
            ready = [c for c, need in zip(options, lacking, strict=True) if not need]
            if ready:  # something that can go out now beats a chain of recoveries
                chosen.setdefault(ready[0].key, ready[0]).values.append(value)
                continue
            need = next((n for n in lacking if all(v not in seen for v in n)), [])
            pending += need  # recover the arguments of a read first
            seen.update(need)
            missing.update(need)
        calls = [c for c in chosen.values() if c.kind != "ask"]
        return calls, [c for c in chosen.values() if c.kind == "ask"]

    def _lacking(self, candidate: _Candidate, texts: list[str]) -> list[Leaf]:
        """Arguments of a read candidate that are not available yet."""
        needs = candidate.action.needs if candidate.action is not None else ()
        return [v for v in needs if not available(v, texts)]

    def _candidates(
        self,
        value: Leaf,
        view: Sequence[Message],
        names: frozenset[str],
        done: Sequence[Action],
        *,
        ask: bool,
    ) -> Iterator[_Candidate]:
        """The ways to get ``value`` back, best first (none known to fail for it)."""
        stub = self._stub(value, view, names)
        if stub is not None:
            yield stub
        fact = next((f for f in self.plan.facts if found(value, f.text)), None)
        if ask and fact is not None and (f"ask:{fact.text}", value) not in self._dead:
            yield _Candidate("ask", f"ask:{fact.text}", fact=fact)
        for action in reversed(done):
            key = call_key(action.name, action.arguments)
            if (
                action.read
                and value not in action.needs
                and (key, value) not in self._dead
                and found(value, action.output)
            ):
                call = (action.name, dict(action.arguments))
                yield _Candidate("read", key, call=call, output=action.output, action=action)

    def _stub(
        self, value: Leaf, view: Sequence[Message], names: frozenset[str]
    ) -> _Candidate | None:
        """A restore or recall call named by a stub standing for an output with ``value``."""
        for message in reversed(view):
            if not isinstance(message, ToolMessage):
                continue
            output = self.outputs.get(message.tool_call_id)
            if output is None or not found(value, output) or found(value, message.content):
                continue
            for tool, (regex, arg) in _STUBS.items():
                if tool not in names:
                    continue
                for match in regex.finditer(message.content):
                    key = f"{tool}:{match.group(1)}:{match.group(2) or ''}"
                    if (key, value) in self._dead:
                        continue
                    args: dict[str, Any] = {arg: int(match.group(1))}
                    if match.group(2):
                        args["lines"] = match.group(2)
                    return _Candidate(tool, key, call=(tool, args), output=output)
        return None

    def _calls(self, chosen: list[_Candidate]) -> AssistantMessage:
        calls = []
        for c in chosen:
            assert c.call is not None
            call = self.new_call(c.call[0], c.call[1], c.output)
            calls.append(call)
            self._last.append((call.id, c.key, c.values))
            if c.kind == "read":
                self.stats.rereads += 1
                self._redundant(c, c.key in self.made)
                self.made.add(c.key)
            else:
                self.stats.restores += 1
                self._redundant(c, True)
        return AssistantMessage(None, tool_calls=tuple(calls))

    def _redundant(self, candidate: _Candidate, redundant: bool) -> None:
        if redundant:
            self.stats.redundant_calls += 1
            self.stats.refetched_values += len(candidate.values)

    def _ask(self, chosen: list[_Candidate]) -> AssistantMessage:
        labels = []
        for c in chosen:
            assert c.fact is not None
            labels.append(label_for(c.values[0], c.fact, self.plan.facts))
            self._last.append(("", c.key, c.values))
            if c.fact.text in self._asked:
                self.stats.reasks += 1
                self._redundant(c, True)
            else:
                self.stats.first_asks += 1
                self._asked.add(c.fact.text)
        return AssistantMessage(ASK + "; ".join(dict.fromkeys(labels)) + "?")
