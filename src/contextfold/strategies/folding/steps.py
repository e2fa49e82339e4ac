"""Steps as the folder reads them: plain text blocks, one per step, labelled with its index."""

from __future__ import annotations

from contextfold.core.history import Step
from contextfold.core.messages import AssistantMessage
from contextfold.core.tokens import CHARS_PER_TOKEN

__all__ = ["estimate_tokens", "step_text"]


def step_text(step: Step) -> str:
    """``[step N] role: text`` lines for a step: the message (tool calls as ``name(args)``,
    reasoning left out) and each tool result."""
    head = step.message
    lines = []
    if isinstance(head, AssistantMessage):
        if head.content:
            lines.append(f"[step {step.index}] assistant: {head.content}")
        for call in head.tool_calls:
            lines.append(f"[step {step.index}] assistant calls {call.name}({call.arguments})")
    else:
        lines.append(f"[step {step.index}] user: {head.content}")
    for result in step.results:
        lines.append(f"[step {step.index}] {result.name or 'tool'} returned: {result.content}")
    return "\n".join(lines)


def estimate_tokens(step: Step) -> int:
    """Characters / :data:`~contextfold.core.tokens.CHARS_PER_TOKEN` of a step's text,
    reasoning excluded: CarryOn's trigger estimate, rounded down as CarryOn's is (where the
    summarising strategies fold depends on it, so it is not the approximation's rounding up)."""
    head = step.message
    chars = len(head.content or "")
    if isinstance(head, AssistantMessage):
        chars += sum(len(c.name) + len(c.arguments) for c in head.tool_calls)
    chars += sum(len(r.content) for r in step.results)
    return chars // CHARS_PER_TOKEN
