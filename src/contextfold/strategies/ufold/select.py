"""Model-free extraction (``folder=none``): observation lines chosen by relevance, no model.

Exact matches of the dialogue's salient tokens first, then BM25-ranked lines, within a token
budget: ufold's selection at no folder cost.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from contextfold.core.history import History, Step
from contextfold.core.messages import AssistantMessage
from contextfold.strategies.ufold.log import Piece, observation_lines

__all__ = ["dialogue_steps", "line_tokens", "query_tokens", "salient", "select_lines", "step_query"]

_TOKEN = re.compile(r"[A-Za-z0-9](?:[\w@#.+\-]*[A-Za-z0-9])?")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[a-z0-9]+")
_STOP_TEXT = (
    "a an and are as at be but by can could do for from have hello hi how i if in is it me my "
    "no not of ok okay on or please so thank thanks that the this to was we what when where "
    "which will with would yes you your"
)
_STOP = frozenset(_STOP_TEXT.split())

Key = tuple[int, int, int]
"""(step, result, line offset)."""


def salient(text: str, *, names: bool = True) -> set[str]:
    """The salient tokens of a text, lower-cased (see the module doc).

    Case-insensitive whole tokens: identifiers (with a digit, ``_``, ``@`` or ``#``), codes in
    capitals, names (capitalised words inside a sentence), dates and numbers of three characters or
    more.
    """
    out: set[str] = set()
    for sentence in _SENTENCE.split(text):
        for k, match in enumerate(_TOKEN.finditer(sentence)):
            token = match.group()
            if _is_salient(token, name=names and k > 0):
                out.add(token.lower())
    return out


def _is_salient(token: str, *, name: bool) -> bool:
    if any(c.isdigit() for c in token):
        return len(token) >= 3
    if any(c in token for c in "_@#"):
        return len(token) >= 4
    if len(token) >= 3 and token.isupper():
        return True
    return name and token[0].isupper() and token.lower() not in _STOP


def dialogue_steps(history: History, end: int) -> list[int]:
    """Steps before ``end`` that carry dialogue: user messages and agent texts."""
    return [s.index for s in history.steps[:end] if s.kind == "user" or s.message.content]


def query_tokens(history: History, upto: int) -> set[str]:
    """Salient tokens of the dialogue up to step ``upto`` and of the agent's tool arguments."""
    tokens: set[str] = set()
    for step in history.steps[: upto + 1]:
        tokens |= step_query(step)
    return tokens


def step_query(step: Step) -> set[str]:
    """One step's share of :func:`query_tokens`: its text and its tool calls' arguments."""
    tokens = salient(step.message.content or "")
    if isinstance(step.message, AssistantMessage):
        for call in step.message.tool_calls:
            for value in _leaves(_arguments(call.arguments)):
                tokens |= salient(value, names=False) | _whole(value)
    return tokens


def line_tokens(text: str) -> set[str]:
    """The tokens of an observation line, lower-cased, as a query matches them."""
    return set(_TOKEN.findall(text.lower()))


def _whole(value: str) -> set[str]:
    """A short argument value that is one token (``JFK``, ``mia_li_3668``) counts whole."""
    return {value.lower()} if _TOKEN.fullmatch(value) and len(value) >= 3 else set()


def _arguments(text: str) -> Any:
    try:
        return json.loads(text or "{}")
    except (json.JSONDecodeError, RecursionError):  # the model's text: it may be anything
        return text


def _leaves(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, str | int | float) and not isinstance(value, bool):
        yield str(value)


def select_lines(history: History, cut: int, *, room: int, ranked: int) -> list[Piece]:
    """The observation lines of the steps before ``cut`` to show (see the module doc).

    The query is the dialogue (every user message and agent text up to the current user turn) and
    the values the agent passed to its tools. An observation line is **matched** when it holds one
    of their salient tokens verbatim (:func:`salient`). Up to ``ranked`` more lines come from BM25
    (``bm25s``) between the current user turn (with the agent's message before it) and every
    observation line. Matched lines go first (most matches, then the most recent), then ranked
    ones, until the lines would pass ``room`` tokens; the chosen lines are returned in history
    order, as runs of lines of one tool result.
    """
    lines = [
        ((step.index, r, k), text)
        for step in history.steps[:cut]
        for r, k, text in observation_lines(step)
        if text.strip()
    ]
    if not lines:
        return []
    query = query_tokens(history, cut)
    matches = [len(query & line_tokens(text)) for _, text in lines]
    order = sorted((i for i, n in enumerate(matches) if n), key=lambda i: (-matches[i], -i))
    order += _ranked(lines, history, cut, ranked, set(order))
    return _runs(_fit(order, lines, history, room))


def _ranked(
    lines: Sequence[tuple[Key, str]], history: History, cut: int, top: int, taken: set[int]
) -> list[int]:
    """Up to ``top`` lines not taken yet, by BM25 against the current user turn (and the
    agent's message before it)."""
    query = _terms(_turn_text(history, cut))
    if top <= 0 or not query:
        return []
    import bm25s  # numpy and a sparse index: loaded only when a model-free fold runs

    retriever = bm25s.BM25()
    retriever.index([_terms(text) for _, text in lines], show_progress=False)
    scores = retriever.get_scores(query)
    best = sorted(range(len(lines)), key=lambda i: -float(scores[i]))
    return [i for i in best if float(scores[i]) > 0 and i not in taken][:top]


def _turn_text(history: History, cut: int) -> str:
    texts = [history[cut].message.content or ""] if cut < len(history) else []
    before = [s for s in history.steps[:cut] if s.kind == "assistant" and s.message.content]
    return "\n".join(texts + ([before[-1].message.content or ""] if before else []))


def _terms(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


def _fit(
    order: Sequence[int], lines: Sequence[tuple[Key, str]], history: History, room: int
) -> list[Key]:
    """The lines in ``order`` that fit ``room`` tokens together, in history order."""
    counts = history.counter.count_batch([lines[i][1] for i in order]) if order else []
    chosen, used = [], 0
    for i, n in zip(order, counts, strict=True):
        if used + n + 1 <= room:
            chosen.append(lines[i][0])
            used += n + 1
    return sorted(chosen)


def _runs(keys: Sequence[Key]) -> list[Piece]:
    """Consecutive lines of one result merged into one piece."""
    pieces: list[Piece] = []
    for step, result, offset in keys:
        last = pieces[-1] if pieces else None
        if last and (last.step, last.result, last.last + 1) == (step, result, offset):
            pieces[-1] = Piece(step, result, last.first, offset)
        else:
            pieces.append(Piece(step, result, offset, offset))
    return pieces
