"""Step digests: what CarryOn's tracker (and compiler) read of a live-tail step.

Each part keeps its head and tail lines and says what was cut and how to read all of it, so a
whole tail fits one tracker call while the agent's choices and the outcomes survive; nothing is
lost (the step is in the history).
"""

from __future__ import annotations

from collections.abc import Sequence

from contextfold.core.history import Step
from contextfold.core.messages import AssistantMessage
from contextfold.core.tokens import TokenCounter

__all__ = ["cut", "digest", "digests"]

_FLOOR = 160
"""Fewest characters a step's digest is given, whatever the tail's length."""


def digest(step: Step, chars: int) -> str:
    """The step as ``[step N] ...`` lines, its parts cut to share ``chars`` characters.

    The step's text (:func:`~contextfold.strategies.folding.steps.step_text`) with every part (the
    message text, each call's arguments, each tool result) cut to its share of ``chars``: the head
    and the tail of its lines, and between them a note such as ``[212 lines cut; restore(step=7)]``
    (a single long line loses its middle characters). Short parts keep all of their text and leave
    their share to the long ones.
    """
    parts = _parts(step)
    shares = _allot([len(text) for _, text, _ in parts], chars)
    return "\n".join(
        f"[step {step.index}] {label}{cut(text, share, step.index)}{end}"
        for (label, text, end), share in zip(parts, shares, strict=True)
    )


def digests(steps: Sequence[Step], *, chars: int, limit: int, counter: TokenCounter) -> list[str]:
    """Digests of ``steps``, at most ``chars`` characters each, shrunk together until they
    fit ``limit`` tokens (as ``counter`` counts them) or reach the floor.

    The digests are sized so that together they fit ``limit`` tokens (one tracker call) while a
    step's share does not fall below ``floor_chars``.
    """
    each = max(min(chars, limit * 4 // max(len(steps), 1)), _FLOOR)
    blocks = [digest(s, each) for s in steps]
    for _ in range(3):
        used = sum(counter.count_batch(blocks)) if blocks else 0
        if used <= limit or each == _FLOOR:
            break
        each = max(int(each * limit / used * 0.95), _FLOOR)
        blocks = [digest(s, each) for s in steps]
    return blocks


def cut(text: str, chars: int, index: int) -> str:
    """``text`` if it fits ``chars``, else its head and tail lines with a note of the cut."""
    if len(text) <= chars:
        return text
    lines = text.splitlines()
    half = max(chars // 2, 1)
    if len(lines) < 3:
        gone = len(text) - 2 * half
        return f"{text[:half]} [{gone} characters cut; restore(step={index})] {text[-half:]}"
    head = _take(lines, half, from_end=False)
    tail = _take(lines[len(head) :], half, from_end=True)
    gone = len(lines) - len(head) - len(tail)
    note = f"[{gone} lines cut; restore(step={index})]"
    return "\n".join([*head, note, *tail])


def _take(lines: Sequence[str], chars: int, *, from_end: bool) -> list[str]:
    """Whole lines from one end within ``chars`` (the first one cut if it alone is longer)."""
    order = list(reversed(lines)) if from_end else list(lines)
    taken: list[str] = []
    used = 0
    for line in order:
        if used + len(line) + 1 > chars:
            if not taken:
                taken.append("..." + line[-chars:] if from_end else line[:chars] + "...")
            break
        taken.append(line)
        used += len(line) + 1
    return list(reversed(taken)) if from_end else taken


def _parts(step: Step) -> list[tuple[str, str, str]]:
    """(label, text, end) for each part of the step, as step_text writes them."""
    head = step.message
    parts: list[tuple[str, str, str]] = []
    if isinstance(head, AssistantMessage):
        if head.content:
            parts.append(("assistant: ", head.content, ""))
        parts += [(f"assistant calls {c.name}(", c.arguments, ")") for c in head.tool_calls]
    else:
        parts.append(("user: ", head.content or "", ""))
    parts += [(f"{r.name or 'tool'} returned: ", r.content, "") for r in step.results]
    return parts


def _allot(lengths: Sequence[int], total: int) -> list[int]:
    """Shares of ``total`` characters: parts shorter than an equal share keep their length,
    the rest is split equally among the longer ones."""
    shares = [0] * len(lengths)
    left = total
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    for k, i in enumerate(order):
        shares[i] = min(lengths[i], max(left // (len(lengths) - k), 1))
        left -= shares[i]
    return shares
