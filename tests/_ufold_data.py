"""The airline session the ufold tests build (test_ufold.py, test_ufold_inturn.py): one task,
then tool calls whose outputs are the reservation, a flight search or a noisy listing."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from contextfold.core.history import History
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.core.store import SQLiteStore

TASK = "Please move reservation ABC123 to 2024-05-20. I must stay under 300 dollars."
OTHERS = [
    f'{{"reservation_id": "ZZ{i:04d}", "user_id": "other_{i}", "cabin": "economy"}}'
    for i in range(30)
]
"""Thirty other customers' reservations: the noise a listing buries the real one in."""


def noisy(real: str) -> str:
    """A tool output: the ``real`` line, then the thirty others."""
    return "\n".join([real, *OTHERS])


def call(
    i: int, name: str, args: Mapping[str, Any], output: str
) -> tuple[AssistantMessage, ToolMessage]:
    """One step: the agent calls ``name`` and the tool answers ``output``."""
    tool_call = ToolCall(f"c{i}", name, json.dumps(dict(args)))
    return AssistantMessage(None, tool_calls=(tool_call,)), ToolMessage(output, f"c{i}", name=name)


def airline(
    *steps: Sequence[Message], store: SQLiteStore | None = None, session_id: str = "s"
) -> History:
    """The task, then ``steps`` in order (each one step's messages); kept in ``store`` as
    ``session_id`` when a store is given."""
    history = History(
        SystemMessage("You are an airline agent."),
        store=store,
        session_id=session_id if store else None,
    )
    history.append(UserMessage(TASK))
    for step in steps:
        history.append(*step)
    return history
