"""Views and histories as compact JSON for the inspector page.

Each distinct message and elision is written once, and a call keeps only what changed since the
previous one (the diff a prefix cache sees), so a 300-step trajectory stays small.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from contextfold.core.history import Step
from contextfold.core.messages import AssistantMessage, Message, ToolMessage, common_prefix
from contextfold.core.meter import CallRecord
from contextfold.core.view import Elision, View

__all__ = ["KINDS", "CallSeen", "SessionEncoder"]

KINDS = ("verbatim", "transformed", "synthetic")
"""Provenance kinds, encoded by their position."""


@dataclass(frozen=True, slots=True)
class CallSeen:
    """One model call of a run: the step it produced, the view sent, what the meter saw."""

    step: int
    view: View
    record: CallRecord


@dataclass(slots=True)
class SessionEncoder:
    """Builds one session's JSON: its history, then one run per strategy.

    ``msgs`` holds each distinct message once, ``els`` each distinct elision once; steps and calls
    refer to them by position. A call stores ``keep`` leading items of the previous view, then
    ``add``; ``brk`` is the cache break: the first view position where the prompt differs from the
    previous call's (None on the first call or when the previous prompt is kept whole).
    """

    msgs: list[dict[str, Any]] = field(default_factory=list)
    els: list[list[Any]] = field(default_factory=list)
    _msg_ids: dict[Message, int] = field(default_factory=dict)
    _el_ids: dict[Elision, int] = field(default_factory=dict)

    def message(self, message: Message) -> int:
        """The message's position in ``msgs`` (added on first sight)."""
        found = self._msg_ids.get(message)
        if found is None:
            found = self._msg_ids[message] = len(self.msgs)
            self.msgs.append({"r": message.role, "c": _text(message)})
        return found

    def elision(self, elision: Elision) -> int:
        found = self._el_ids.get(elision)
        if found is None:
            found = self._el_ids[elision] = len(self.els)
            restore = None if elision.restore is None else str(elision.restore)
            self.els.append([list(elision.steps), elision.reason, elision.tokens, restore])
        return found

    def steps(self, steps: Sequence[Step]) -> list[dict[str, Any]]:
        return [
            {"i": s.index, "k": s.kind, "m": [self.message(m) for m in s.messages], "t": s.tokens}
            for s in steps
        ]

    def run(self, name: str, calls: Sequence[CallSeen], *, note: str = "") -> dict[str, Any]:
        """One strategy's calls, each as a diff against the previous view."""
        out: list[dict[str, Any]] = []
        previous: View | None = None
        cost = 0.0
        for call in calls:
            cost += call.record.cost_usd
            out.append(self._call(call, previous, cost))
            previous = call.view
        return {"name": name, "note": note, "calls": out}

    def _call(self, call: CallSeen, previous: View | None, cost: float) -> dict[str, Any]:
        view, record = call.view, call.record
        keep = 0 if previous is None else common_prefix(previous.messages, view.messages)
        broke = previous is not None and keep < len(previous.messages)
        add = [
            [self.message(m), t, KINDS.index(p.kind), list(p.steps)]
            for m, t, p in zip(
                view.messages[keep:], view.tokens[keep:], view.provenance[keep:], strict=True
            )
        ]
        return {
            "step": call.step,
            "keep": keep,
            "add": add,
            "brk": keep if broke else None,
            "e": [self.elision(e) for e in view.elisions],
            "prompt": record.prompt_tokens,
            "reused": record.reused_tokens,
            "removed": record.removed_tokens,
            "cost": record.cost_usd,
            "cum_cost": cost,
        }


def _text(message: Message) -> str:
    if isinstance(message, AssistantMessage):
        parts = [message.content or ""]
        parts.extend(f"→ {c.name}({c.arguments})" for c in message.tool_calls)
        return "\n".join(p for p in parts if p)
    if isinstance(message, ToolMessage) and message.name:
        return f"[{message.name}] {message.content}"
    return message.content
