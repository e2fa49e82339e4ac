"""Resuming a session after a crash: the stored history goes on where it stopped.

The strategy and the environment are brought to the state the run had, without calling the model
for anything already recorded.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from contextfold.agent.loop import Agent, AgentResult
from contextfold.core.driver import Driver
from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage
from contextfold.core.own_tools import own_tool_names
from contextfold.core.protocols import Environment, Strategy, UserSimulator

__all__ = ["model_calls_made", "replay_tools", "resume"]

AgentFactory = Callable[[UserSimulator | None, int], Agent]
"""Builds the agent for one leg of the resumed run: (user or None, max_steps)."""


def resume(
    history: History,
    strategy: Strategy,
    env: Environment,
    make_agent: AgentFactory,
    *,
    user: UserSimulator | None,
    max_steps: int,
) -> AgentResult:
    """Continue ``history`` for what is left of ``max_steps`` model calls.

    ``make_agent`` must build its agent on this ``history``, ``strategy`` and ``env``, with one
    shared meter (the run may take two legs: the model's turn, then the user's).

    What it does, in order, with a history reopened by :meth:`History.open` and a fresh strategy,
    environment and user simulator:

    - the strategy observes every stored step, in order (as it did live);
    - the environment's state is rebuilt by running the agent's recorded tool calls again, in
      order, their outputs discarded (the stored results stay what the agent saw); the strategy's
      own tools (``restore``, ``recall``) change no environment and are not rerun;
    - the step cap counts the model calls already made: one per stored assistant step, less an
      opening greeting (step 0 from the agent, which no model wrote);
    - whoever speaks next speaks: the model after a user message or tool results, the user after an
      agent's reply that called no tool (a run without a user simulator had ended there).

    The user simulator must derive its state from the conversation (as
    :class:`~contextfold.envs.tau2_user.Tau2User` does). Traffic it keeps outside the history
    (telecom's phone tools) is not stored, so it is not replayed.
    """
    Driver.resumed(strategy, history)  # the strategy observes every stored step, in order
    replay_tools(history, env, strategy)
    left = max(0, max_steps - model_calls_made(history))
    if left == 0:
        return make_agent(None, 0).result
    if not _model_next(history):
        if user is None:
            done = make_agent(None, left).result
            done.stop = "answered"
            return done
        return make_agent(user, left).run()
    first = make_agent(None, left).run()  # the model's turn, up to its reply to the user
    used = model_calls_made(history) - (max_steps - left)
    if user is None or first.stop != "answered" or used >= left:
        return first
    return _merge(first, make_agent(user, left - used).run())


def model_calls_made(history: History) -> int:
    """Assistant steps written by the model (an opening greeting at step 0 is not one)."""
    steps = history.steps
    return sum(1 for s in steps if s.kind == "assistant" and s.index > 0)


def replay_tools(history: History, env: Environment, strategy: Strategy) -> int:
    """Run the agent's recorded environment tool calls again, in order; returns how many."""
    skip = set(own_tool_names(strategy))
    known = {t["function"]["name"] for t in env.tools()}
    count = 0
    for step in history.steps:
        message = step.message
        for call in message.tool_calls if isinstance(message, AssistantMessage) else ():
            if call.name in skip or call.name not in known:
                continue
            arguments = _arguments(call.arguments)
            if arguments is not None:
                env.call(call.name, arguments)
                count += 1
    return count


def _model_next(history: History) -> bool:
    if not history.steps:
        return False
    last = history.steps[-1]
    message = last.message
    return not (isinstance(message, AssistantMessage) and not message.tool_calls)


def _arguments(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError:
        return None  # the agent saw an error result; nothing ran
    return value if isinstance(value, dict) else None


def _merge(first: AgentResult, second: AgentResult) -> AgentResult:
    second.tool_calls += first.tool_calls
    second.tool_errors += first.tool_errors
    second.forced_compactions += first.forced_compactions
    second.views[:0] = first.views
    return second
