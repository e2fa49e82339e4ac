"""The context-dependent oracle: a deterministic ``Model`` that knows the plan but must read every
value it uses from the view it was just sent.

It reads the messages it is given, never the history, so what a strategy dropped is missing for
it as it would be for a real agent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextfold.bench.sufficiency.dialog import INSTRUCT
from contextfold.bench.sufficiency.plan import Action, Plan
from contextfold.bench.sufficiency.recovery import Recovery, RecoveryStats, call_key
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    UserMessage,
    message_text,
)
from contextfold.core.protocols import Completion, Usage
from contextfold.core.tokens import ApproxCounter
from contextfold.core.verbatim import Leaf, available, evidence, found

__all__ = ["Oracle", "OracleStats"]

GOODBYE = "Everything is done. Thank you for calling, goodbye!"


@dataclass(slots=True)
class OracleStats:
    """What the oracle could not do."""

    skipped: list[str] = field(default_factory=list)
    """Names of the actions it could not take (a value was missing and not recoverable)."""
    untold: list[str] = field(default_factory=list)
    """``communicate_info`` items it could not say (not in the view)."""
    lost_user_values: int = 0
    """Needed values from the user's facts, said before, missing from the view."""
    lost_tool_values: int = 0
    """Needed values from tool outputs, returned before, missing from the view."""


class Oracle:
    """Walks a :class:`Plan`, reading values only from the view it is given.

    Each call it looks at the plan's next action. When every checked value is available in the view
    (:mod:`contextfold.core.verbatim`), it makes the call; when some are missing, it recovers them
    (:mod:`.recovery`: restore or recall a stub, ask the user, read again), one round per model
    call; when nothing recovers them it **skips** the action, and the reward shows the loss.
    Besides the view it knows only the plan (which of its own calls returned which output, so a
    stub standing for one can be told apart). Its usage reports no prompt tokens, so the meter
    counts the view.

    A value the action needs that is missing although the session already had it (the user said it
    in a message the oracle was shown, or one of its calls returned it) is **lost**, counted once
    per action by where it came from: ``lost_user_values`` for a user's fact, ``lost_tool_values``
    otherwise. User-side actions (telecom: the user's phone) go out as instructions, one line each
    (``- toggle_data {}``), for :class:`~.user.ScriptedUser`. After the last action it tells the
    user what ``communicate_info`` requires (checked items only when the view holds them, after the
    same recovery) and says goodbye.
    """

    def __init__(self, plan: Plan, *, max_rounds: int = 6) -> None:
        self.name = "oracle"
        self.plan = plan
        self.stats = OracleStats()
        self.recovery = Recovery(plan, self._call, max_rounds=max_rounds)
        self.position = 0
        """Index of the next plan action."""
        self.finished = False
        self._ids = 0
        self._counter = ApproxCounter()
        self._said: dict[str, None] = {}
        """Texts of the user messages the oracle was shown (in order, once each)."""
        self._lost: set[tuple[int, Leaf]] = set()

    @property
    def recovery_stats(self) -> RecoveryStats:
        """What recovery cost so far (redundant calls, restores, re-reads, asks)."""
        return self.recovery.stats

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]] = (),
        *,
        max_tokens: int | None = None,
        response_schema: Mapping[str, Any] | None = None,
    ) -> Completion:
        """The next message, computed from ``messages`` (the view) and the plan only (the
        oracle is an agent, not a folder: ``response_schema`` plays no part)."""
        names = frozenset(t["function"]["name"] for t in tools)
        self._said.update((m.content, None) for m in messages if isinstance(m, UserMessage))
        message = self._next(messages, names)
        tokens = self._counter.count(message_text(message))
        return Completion(message, Usage(completion_tokens=tokens))

    def _next(self, view: Sequence[Message], names: frozenset[str]) -> AssistantMessage:
        texts = evidence(view)
        actions = self.plan.actions
        while self.position < len(actions):
            action = actions[self.position]
            if action.side == "user":
                return self._instruct()
            if all(available(v, texts) for v in action.needs):
                return self._act(action)
            self._count_lost(action.needs, texts)
            done = actions[: self.position]
            recovery = self.recovery.round(action.needs, view, names, done)
            if recovery is not None:
                return recovery
            self.stats.skipped.append(action.name)
            self._advance()
        return self._close(view, texts, names)

    def _count_lost(self, needs: Sequence[Leaf], texts: list[str]) -> None:
        """Count the needed values missing from the view that the session already had."""
        for value in needs:
            key = (self.position, value)
            if key in self._lost or available(value, texts):
                continue
            from_user = any(found(value, f.text) for f in self.plan.facts)
            had = self._said if from_user else self.recovery.outputs.values()
            if any(found(value, text) for text in had):
                self._lost.add(key)
                if from_user:
                    self.stats.lost_user_values += 1
                else:
                    self.stats.lost_tool_values += 1

    def _advance(self) -> None:
        self.position += 1
        self.recovery.reset()

    def _call(self, name: str, arguments: Mapping[str, Any], output: str) -> ToolCall:
        self._ids += 1
        call = ToolCall(f"oracle_{self._ids}", name, json.dumps(arguments, ensure_ascii=False))
        self.recovery.outputs[call.id] = output
        return call

    def _act(self, action: Action) -> AssistantMessage:
        self.recovery.made.add(call_key(action.name, action.arguments))
        self._advance()
        call = self._call(action.name, action.arguments, action.output)
        return AssistantMessage(None, tool_calls=(call,))

    def _instruct(self) -> AssistantMessage:
        """Instructions for the run of user-side actions that comes next."""
        lines = [INSTRUCT]
        actions = self.plan.actions
        while self.position < len(actions) and actions[self.position].side == "user":
            action = actions[self.position]
            lines.append(f"- {action.name} {json.dumps(dict(action.arguments))}")
            self._advance()
        return AssistantMessage("\n".join(lines))

    def _close(
        self, view: Sequence[Message], texts: list[str], names: frozenset[str]
    ) -> AssistantMessage:
        """Tell the user what the task requires (recovering it first), then say goodbye."""
        if self.finished:
            return AssistantMessage(GOODBYE)
        needs = self.plan.communicate_needs
        if not all(available(v, texts) for v in needs):
            self._count_lost(needs, texts)
            recovery = self.recovery.round(needs, view, names, self.plan.actions)
            if recovery is not None:
                return recovery
        self.finished = True
        lost = {str(v) for v in needs if not available(v, texts)}
        self.stats.untold = [c for c in self.plan.communicate if c in lost]
        told = [c for c in self.plan.communicate if c not in lost]
        if not told:
            return AssistantMessage(GOODBYE)
        return AssistantMessage(f"Here is what you asked about: {', '.join(told)}. {GOODBYE}")
