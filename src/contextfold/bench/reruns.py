"""Re-run pricing: replay pays for what a live agent does to get back a value its view lost.

The twin of restore pricing (:mod:`~contextfold.bench.restores`). A value a recorded call needs
that the view neither shows nor can give back is not free: a live agent runs the tool that
gave it again (or, for a value only the user gave, asks the user again), and that costs a
model call and the output it brings back. Without it, a strategy that drops what later calls
use would look cheaper than one that keeps it restorable and pays for each restore.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from contextfold.bench.availability import Need, Places
from contextfold.core.history import History, Step, make_step
from contextfold.core.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from contextfold.core.prepared import PreparedText, value_runs

__all__ = ["ASK_AGAIN", "Source", "choose_reruns", "rerun_steps"]

ASK_AGAIN = "I no longer have what you told me before; could you tell me again?"
"""The agent's question when a lost value came from the user only (its completion)."""


@dataclass(frozen=True, slots=True)
class Source:
    """A recorded message that held a lost value, and the history step it is in."""

    step: int
    message: ToolMessage | UserMessage
    text: PreparedText


def choose_reruns(lost: Sequence[Need], places: Places, history: History) -> list[Source]:
    """The recorded messages an agent gets again to have every ``lost`` value back.

    For each value in turn, unless a source already chosen for this call holds it, the tool
    result holding it in the fewest characters (the latest on a tie), as an agent re-runs the
    command that showed it; a value no tool result held, the user message holding it (the
    agent asks again). The agent's own earlier commands hold values but cannot be re-run.
    """
    chosen: list[Source] = []
    for need in lost:
        runs = value_runs(need.value)
        if any(s.text.holds(need.value, runs) for s in chosen):
            continue
        sources = _sources(need, places, history)
        tools = [s for s in sources if isinstance(s.message, ToolMessage)]
        fits = tools or sources
        if fits:
            chosen.append(min(fits, key=lambda s: (len(s.message.content), -s.step)))
    return chosen


def _sources(need: Need, places: Places, history: History) -> list[Source]:
    """The need's holders that a re-run or a question gives again, where they now sit."""
    holders = {id(m) for m in need.messages}
    out = []
    for recorded in need.steps:
        at = places.shift.get(recorded, recorded)
        for message in history[at].messages:
            if id(message) in holders and isinstance(message, ToolMessage | UserMessage):
                out.append(Source(at, message, PreparedText(message.content)))
    return out


def rerun_steps(sources: Sequence[Source], history: History, *, call: int) -> list[Step]:
    """The next steps of ``history`` that get ``sources`` again (``call``: the recorded step
    they come before, for the call ids): one assistant message that calls each tool again
    with its recorded arguments, answered by the recorded outputs whole, and asks the user
    again when a source is the user's; then the user's recorded words again, in one message."""
    tools = [s for s in sources if isinstance(s.message, ToolMessage)]
    users = [s.message.content for s in sources if isinstance(s.message, UserMessage)]
    calls, results = [], []
    for k, source in enumerate(tools):
        assert isinstance(source.message, ToolMessage)
        original = _call_of(history[source.step], source.message)
        call_id = f"replay-rerun-{call}-{k}"
        calls.append(ToolCall(call_id, original.name, original.arguments))
        results.append(ToolMessage(source.message.content, call_id, name=source.message.name))
    ask = AssistantMessage(ASK_AGAIN if users else None, tool_calls=tuple(calls))
    steps = [make_step(len(history), [ask, *results], history.counter)]
    if users:
        again = UserMessage("\n\n".join(users))
        steps.append(make_step(len(history) + 1, [again], history.counter))
    return steps


def _call_of(step: Step, result: ToolMessage) -> ToolCall:
    """The call ``result`` answers in ``step``."""
    head = step.message
    calls = head.tool_calls if isinstance(head, AssistantMessage) else ()
    for call in calls:
        if call.id == result.tool_call_id:
            return call
    return ToolCall(result.tool_call_id, result.name or "tool", "{}")
