"""In-turn folding: a tool output inside a user turn keeps only its relevant lines, from the first
call that sends it.

Trimmed once, when it is new, every later call of the turn sends the same text, so nothing
already sent is rewritten; the whole output stays restorable.
"""

from __future__ import annotations

import weakref
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from contextfold.core.history import History, Step
from contextfold.core.messages import AssistantMessage, ToolMessage
from contextfold.strategies.ufold.select import line_tokens, query_tokens, step_query

__all__ = ["InTurn", "Trim", "trim_step"]

_OWN_TOOLS = frozenset({"restore"})


@dataclass(frozen=True, slots=True)
class Trim:
    """A step's tool results as sent: trimmed ones replaced, the others as they are."""

    results: tuple[ToolMessage, ...]
    tokens: tuple[int, ...]
    removed: int
    """Tokens left out of the step's results."""


class InTurn:
    """Trims per step of one history, computed once each (the history only grows)."""

    def __init__(self, *, min_tokens: int) -> None:
        self.min_tokens = min_tokens
        self._history: weakref.ref[History] | None = None
        self._trims: dict[int, Trim | None] = {}
        self._query: set[str] = set()
        self._upto = 0  # steps whose tokens are in _query

    def trim(self, history: History, index: int) -> Trim | None:
        """Step ``index``'s trimmed results, or None when it is sent whole."""
        if self._history is None or self._history() is not history:
            self._history, self._trims, self._query, self._upto = weakref.ref(history), {}, set(), 0
        if index in self._trims:
            return self._trims[index]
        if index >= self._upto:
            for step in history.steps[self._upto : index + 1]:
                self._query |= step_query(step)
            self._upto = index + 1
            query = self._query
        else:  # an earlier step asked for late: its own query, no later step's tokens
            query = query_tokens(history, index)
        found = trim_step(history, history[index], query, min_tokens=self.min_tokens)
        self._trims[index] = found
        return found


def trim_step(history: History, step: Step, query: set[str], *, min_tokens: int) -> Trim | None:
    """The step's results with each long one cut to its matching lines (see the module doc).

    The lines kept are the first line (what the output is) and every line holding a *telling*
    salient token (:func:`.select.salient`) of the dialogue so far or of the agent's tool
    arguments, its own call's included; a token is telling when at most half the output's lines
    hold it (one most lines share, like a cabin class, picks nothing out). The trimmed result says
    how many lines it kept and names ``restore(step=N)``, and the view records an elision with that
    restore path. An output is left whole when it is shorter than ``min_tokens``, has one line, has
    no line with a telling token, or would lose less than a quarter of its tokens; the results of
    the strategy's own ``restore`` are never trimmed, nor user messages. The decision for step k
    reads only steps 0..k, so every later render (a reopened session too) gives the same bytes.
    """
    if not step.results or not isinstance(step.message, AssistantMessage):
        return None
    own = {c.id for c in step.message.tool_calls if c.name in _OWN_TOOLS}
    results: list[ToolMessage] = []
    tokens: list[int] = []
    for result, count in zip(step.results, step.tokens[1:], strict=True):
        kept = None
        if result.tool_call_id not in own and count >= min_tokens:
            kept = _trimmed(result, step.index, query)
        n = history.count(kept) if kept is not None else count
        if kept is None or n > count * 3 // 4:
            kept, n = result, count
        results.append(kept)
        tokens.append(n)
    removed = sum(step.tokens[1:]) - sum(tokens)
    return Trim(tuple(results), tuple(tokens), removed) if removed > 0 else None


def _trimmed(result: ToolMessage, step: int, query: set[str]) -> ToolMessage | None:
    lines = result.content.splitlines()
    if len(lines) < 2:
        return None
    found = [query & line_tokens(line) for line in lines]
    counts = Counter(token for tokens in found for token in tokens)
    telling = {t for t, n in counts.items() if 2 * n <= len(lines)}
    matched = [k for k, tokens in enumerate(found) if tokens & telling]
    if not matched:
        return None
    keep = sorted({0, *matched})
    head = f"[ufold: {len(keep)} of {len(lines)} lines kept; restore(step={step}) shows all]"
    text = "\n".join([head, *_with_gaps(lines, keep)])
    return ToolMessage(text, result.tool_call_id, name=result.name)


def _with_gaps(lines: Sequence[str], keep: Sequence[int]) -> list[str]:
    out: list[str] = []
    previous = -1
    for k in keep:
        if k - previous > 1:
            out.append(f"[{k - previous - 1} lines left out]")
        out.append(lines[k])
        previous = k
    if previous < len(lines) - 1:
        out.append(f"[{len(lines) - 1 - previous} lines left out]")
    return out
