"""The ``restore`` tool: any step's original content, verbatim, from the history.

Every strategy whose elisions say ``restore(step=N)`` offers this tool (the view check refuses
an elision whose restore tool is not offered). It reads the history, which is whole, so it
needs no state: :func:`call_restore` serves any strategy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage

__all__ = [
    "RESTORE_TOOL",
    "call_restore",
    "calls_made",
    "not_offered",
    "restore_calls",
    "restore_text",
]

RESTORE_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "restore",
        "description": "Show again, verbatim, the step a stub names.",
        "parameters": {
            "type": "object",
            "properties": {"step": {"type": "integer"}},
            "required": ["step"],
        },
    },
}


def restore_text(arguments: Mapping[str, Any], history: History) -> tuple[str, int | None]:
    """The original content of the step named in ``arguments``, and its index (None on error).

    A step with one tool output gives that output exactly; several are each headed with
    their tool name; a step without outputs gives its message text.
    """
    step = arguments.get("step")
    if isinstance(step, str) and step.strip().isdigit():
        step = int(step)
    if not isinstance(step, int) or isinstance(step, bool):
        return "error: restore needs an integer 'step', e.g. restore(step=12)", None
    if not 0 <= step < len(history):
        return f"error: there is no step {step}; steps are numbered 0 to {len(history) - 1}", None
    found = history[step]
    results = found.results
    if len(results) == 1:
        return results[0].content, step
    if results:
        parts = [
            f"[result {k + 1} of {len(results)}: {r.name or 'tool'}]\n{r.content}"
            for k, r in enumerate(results)
        ]
        return "\n".join(parts), step
    return found.message.content or "", step


def not_offered(strategy: str, name: str) -> str:
    """The answer to a call of a tool ``strategy`` does not offer (it offers ``restore``)."""
    return f"error: {strategy} has no tool {name!r}; it offers restore(step)"


def call_restore(strategy: str, name: str, arguments: Mapping[str, Any], history: History) -> str:
    """Answer a call of ``restore`` made to ``strategy``; any other name gets an error text."""
    if name != "restore":
        return not_offered(strategy, name)
    return restore_text(arguments, history)[0]


def calls_made(history: History) -> int:
    """Model calls so far (each made one assistant step), the next one included."""
    return sum(step.kind == "assistant" for step in history.steps) + 1


def restore_calls(history: History) -> int:
    """``restore`` calls the agent has made in ``history``."""
    return sum(
        call.name == "restore"
        for step in history.steps
        if isinstance(step.message, AssistantMessage)
        for call in step.message.tool_calls
    )
