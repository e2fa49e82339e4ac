"""The ``restore`` tool: any step's original content, verbatim, from the history.

Every strategy whose elisions say ``restore(step=N)`` offers this tool (the view check refuses
an elision whose restore tool is not offered). It reads the history, which is whole, so it needs
no state: :func:`call_restore` serves any strategy. Options: ``lines="a-b"`` gives only those
lines (:data:`RESTORE_LINES_TOOL` names it, for a strategy that cuts outputs), ``part``
the agent's own text or calls of the step (:func:`with_part` names it, for one that folds them).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage

__all__ = [
    "RESTORE_LINES_TOOL",
    "RESTORE_TOOL",
    "call_restore",
    "calls_made",
    "not_offered",
    "restore_calls",
    "restore_text",
    "with_part",
]

PARTS = ("text", "calls", "thinking")
"""What ``part`` may name: ``"text"``, the agent's own text of the step; ``"calls"``, its
tool calls, one ``name(arguments)`` a line; ``"thinking"``, its reasoning and what its
provider parts (thinking blocks) hold."""

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


RESTORE_LINES_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "restore",
        "description": "Show again, verbatim, the step a stub names (or only the lines a-b of it).",
        "parameters": {
            "type": "object",
            "properties": {"step": {"type": "integer"}, "lines": {"type": "string"}},
            "required": ["step"],
        },
    },
}


def with_part(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the restore tool's schema ``tool`` with the ``part`` option: ``"text"``
    brings back the agent's own text of the step instead of its outputs, ``"calls"`` its
    calls, ``"thinking"`` its thinking. The description stays as it is (the schema is in
    every prompt): the notes and lines that stand for a text or calls name the option where
    it is needed."""
    out = copy.deepcopy(dict(tool))
    out["function"]["parameters"]["properties"]["part"] = {"type": "string", "enum": list(PARTS)}
    return out


def restore_text(arguments: Mapping[str, Any], history: History) -> tuple[str, int | None]:
    """The original content of the step named in ``arguments``, and its index (None on error).

    A step with one tool output gives that output exactly; several are each headed with
    their tool name; a step without outputs gives its message text, and so does any step with
    ``part="text"`` (the agent's own text of an agent step); ``part="calls"`` gives its calls,
    one ``name(arguments)`` a line; ``part="thinking"`` its thinking. With ``lines="a-b"`` (or
    ``"a"``), only those lines of it, under a line naming them.
    """
    part = arguments.get("part")
    if part is not None and part not in PARTS:
        return f"error: part must be one of {', '.join(map(repr, PARTS))}, got {part!r}", None
    text, step = _step_text(arguments, history, text=part is not None)
    if part == "calls" and step is not None:
        text = _calls_text(history, step)
    elif part == "thinking" and step is not None:
        text = _thinking_text(history, step)
    lines = arguments.get("lines")
    if step is None or lines is None:
        return text, step
    return _lines(text, step, lines)


def _lines(text: str, step: int, spec: object) -> tuple[str, int | None]:
    """Lines ``spec`` (``"a-b"`` or ``"a"``, from 1) of ``step``'s ``text``."""
    found = (
        re.fullmatch(r"\s*([0-9]{1,9})\s*(?:-\s*([0-9]{1,9})\s*)?", spec)
        if isinstance(spec, str)
        else None
    )
    if found is None:
        return f"error: lines must read like '12-40' or '12', got {spec!r}", None
    every = text.splitlines()
    first, last = int(found[1]), int(found[2] or found[1])
    if not 1 <= first <= last <= len(every):
        return f"error: step {step} has lines 1 to {len(every)}; lines {spec!r} are not there", None
    head = f"[step {step}, lines {first}-{last} of {len(every)}]"
    return "\n".join([head, *every[first - 1 : last]]), step


def _step_text(
    arguments: Mapping[str, Any], history: History, *, text: bool = False
) -> tuple[str, int | None]:
    step = arguments.get("step")
    if isinstance(step, str) and re.fullmatch(r"[0-9]{1,9}", step.strip()):
        step = int(step)  # ASCII digits only: "²" passes isdigit() and int() refuses it
    if not isinstance(step, int) or isinstance(step, bool):
        return "error: restore needs an integer 'step', e.g. restore(step=12)", None
    if not 0 <= step < len(history):
        return f"error: there is no step {step}; steps are numbered 0 to {len(history) - 1}", None
    found = history[step]
    results = () if text else found.results
    if len(results) == 1:
        return results[0].content, step
    if results:
        parts = [
            f"[result {k + 1} of {len(results)}: {r.name or 'tool'}]\n{r.content}"
            for k, r in enumerate(results)
        ]
        return "\n".join(parts), step
    return found.message.content or "", step


def _calls_text(history: History, step: int) -> str:
    """The tool calls of ``step``, one ``name(arguments)`` a line."""
    message = history[step].message
    calls = message.tool_calls if isinstance(message, AssistantMessage) else ()
    return "\n".join(f"{c.name}({c.arguments})" for c in calls)


def _thinking_text(history: History, step: int) -> str:
    """The reasoning of ``step`` and the text of its provider parts (a thinking block's)."""
    message = history[step].message
    if not isinstance(message, AssistantMessage):
        return ""
    texts = [message.reasoning or "", *(p.text for p in message.parts)]
    return "\n".join(t for t in texts if t)


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
