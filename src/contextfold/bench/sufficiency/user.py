"""The scripted user: plays a tau2 task's customer from its scenario, with no model.

It answers only from its facts, verbatim, so a value the oracle asks for comes back exactly as
the task states it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from contextfold.bench.sufficiency.dialog import ASK, INSTRUCT, pick_facts
from contextfold.bench.sufficiency.plan import Fact, Plan
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
)

__all__ = ["STOP", "PhoneEnv", "ScriptedUser"]

STOP = "###STOP###"
_LINE = re.compile(r"^- (\w+) (\{.*\})$", re.MULTILINE)


class PhoneEnv(Protocol):
    """What the user needs of the environment (a :class:`~contextfold.envs.tau2.Tau2Env` or a
    :class:`~.session.SessionEnv`): their own tools, and the log of that traffic."""

    def call_user_tool(self, name: str, arguments: Mapping[str, Any]) -> str:
        """Run one of the user's tools."""
        ...

    def record_user_side(self, position: int, messages: Sequence[Message]) -> None:
        """Log that traffic before the message at ``position``."""
        ...


class ScriptedUser:
    """Deterministic customer for one task; implements ``UserSimulator``.

    - Its first message (``respond([])``) is the reason for the call, as the scenario states it.
    - Asked for something (:data:`~.oracle.ASK`, labels separated by ``; ``), it answers each label
      with the sentence of its facts (known info, task instructions, reason for the call) that
      shares the most words with it; a label matching none gets all of its known info.
    - Told to do things on its phone (:data:`~.oracle.INSTRUCT`, one ``- tool {json}`` line each),
      it runs each with :meth:`~contextfold.envs.tau2.Tau2Env.call_user_tool`, logs that traffic in
      the env (:meth:`~contextfold.envs.tau2.Tau2Env.record_user_side`: the evaluator replays it;
      the agent never sees it) and reports what each tool answered.
    - Anything else (the agent's goodbye) ends the session with ``###STOP###`` (``respond`` returns
      None).
    """

    def __init__(self, plan: Plan, env: PhoneEnv) -> None:
        self.plan, self.env = plan, env
        self.stop_token: str | None = None
        self.tool_calls = 0
        """Calls to the user's own (phone) tools so far."""
        self.turns = 0

    def respond(self, messages: Sequence[Message]) -> str | None:
        """The user's next message, or None when the user ends the session."""
        chat = [m for m in messages if not isinstance(m, SystemMessage)]
        self.turns += 1
        if not chat:
            return self.plan.opening or "Hi, I need help."
        last = chat[-1]
        text = (last.content or "") if isinstance(last, AssistantMessage) else ""
        if text.startswith(INSTRUCT):
            return self._carry_out(text, len(chat))
        if text.startswith(ASK):
            return self.answer(text[len(ASK) :].rstrip("?").split("; "))
        self.stop_token = STOP
        return None

    def answer(self, labels: Sequence[str]) -> str:
        """The facts that answer ``labels``, verbatim, in the scenario's order."""
        chosen: set[Fact] = set()
        for label in labels:
            chosen.update(pick_facts(label, self.plan.facts))
        return " ".join(f.text for f in self.plan.facts if f in chosen)

    def _carry_out(self, text: str, position: int) -> str:
        """Run the instructed phone actions; report each tool's answer."""
        traffic: list[Message] = []
        report = []
        for name, arguments in _LINE.findall(text):
            self.tool_calls += 1
            call = ToolCall(f"user_{self.tool_calls}", name, arguments)
            output = self.env.call_user_tool(name, json.loads(arguments))
            traffic += [
                AssistantMessage(None, tool_calls=(call,)),
                ToolMessage(output, call.id, name=name),
            ]
            report.append(f"{name}: {output}")
        if traffic:
            self.env.record_user_side(position, traffic)
        return "Done. " + " | ".join(report) if report else "I am not sure what to do."
