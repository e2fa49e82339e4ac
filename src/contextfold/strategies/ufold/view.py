"""ufold's view: the agent's system prompt, the selected context, the current turn in full.

Every step before the cut that is not shown verbatim, and every output in-turn folding trimmed,
is an elision with ``restore(step=N)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from contextfold.core.history import History, Step
from contextfold.core.messages import UserMessage
from contextfold.core.view import Elision, Provenance, RestorePath, View, ViewBuilder
from contextfold.strategies.folding.view import elide_covered
from contextfold.strategies.ufold.fold import notes_from, notes_text
from contextfold.strategies.ufold.inturn import InTurn
from contextfold.strategies.ufold.log import Piece, call_label
from contextfold.strategies.ufold.select import dialogue_steps

__all__ = ["ViewOptions", "dialogue_text", "render_view"]


@dataclass(frozen=True, slots=True)
class ViewOptions:
    """What stands for the conversation (``notes``: summary and to-do; ``dialogue``: the user
    and agent messages verbatim; ``none``) and whether tool outputs are extracted."""

    conversation: Literal["notes", "dialogue", "none"]
    extract: bool


def render_view(
    history: History,
    output: Mapping[str, Any] | None,
    cut: int,
    options: ViewOptions,
    name: str,
    *,
    inturn: InTurn | None = None,
) -> View:
    """The view for a fold's ``output`` covering the steps before ``cut`` (pure); the tool
    outputs from ``cut`` on trimmed by ``inturn`` when given.

    The selected context is one user message standing for the steps before the cut (the user
    message that triggered the latest accepted fold): the summary and to-do list (or the dialogue
    verbatim), user messages the summary left a value out of, and the extracted observation lines,
    verbatim, each labelled with its step and call, with the folder's facts, constraints and hint.
    Then the current user turn and every step since, verbatim, with native tool calls. With
    ``extract=false`` the tool steps before the cut stay verbatim instead (before the context).
    """
    out = ViewBuilder()
    out.add_system(history)
    if output is None or cut == 0:
        for step in history.steps:
            _add_turn_step(out, history, step, inturn)
        return out.build(name)
    kept = set() if options.extract else _tool_steps(history, cut)
    for index in sorted(kept):
        out.add_step(history[index])
    covered = [i for i in range(cut) if i not in kept]
    note = UserMessage(_context(history, output, cut, options, kept))
    tokens = history.count(note)
    out.add(note, tokens, Provenance(tuple(covered), "transformed"))
    for step in history.steps[cut:]:
        _add_turn_step(out, history, step, inturn)
    elide_covered(out, history, covered, tokens, "ufold")
    return out.build(name)


def _add_turn_step(out: ViewBuilder, history: History, step: Step, inturn: InTurn | None) -> None:
    """A step of the current turn: verbatim, or its tool outputs trimmed (see :mod:`.inturn`)."""
    trim = inturn.trim(history, step.index) if inturn is not None and step.results else None
    if trim is None:
        out.add_step(step)
        return
    out.add(step.message, step.tokens[0], Provenance((step.index,)))
    prov = Provenance((step.index,), "transformed")
    for message, tokens in zip(trim.results, trim.tokens, strict=True):
        out.add(message, tokens, prov)
    out.elide(Elision((step.index,), "ufold-turn", trim.removed, RestorePath.step(step.index)))


def _tool_steps(history: History, cut: int) -> set[int]:
    return {s.index for s in history.steps[:cut] if s.results}


def _context(
    history: History, output: Mapping[str, Any], cut: int, options: ViewOptions, kept: set[int]
) -> str:
    parts = [
        f"[Selected context for steps 0-{cut - 1}, built by ufold when the user last wrote; "
        "restore(step=N) shows any earlier step verbatim]"
    ]
    if options.conversation == "notes":
        parts.append("## Conversation summary\n" + notes_text(notes_from(output)))
        users = [int(i) for i in output.get("kept_users", ())]
        if users:
            lines = [f"[step {i}] user: {history[i].message.content}" for i in users]
            parts.append("## User messages with values the summary left out\n" + "\n".join(lines))
    elif options.conversation == "dialogue":
        steps = [i for i in dialogue_steps(history, cut) if i not in kept]
        parts.append("## Conversation so far (verbatim)\n" + dialogue_text(history, steps))
    if options.extract:
        pieces = [Piece.from_json(p) for p in output.get("pieces", ())]
        parts.append("## Tool output lines (verbatim)\n" + _pieces(history, pieces))
    return "\n\n".join(parts)


def dialogue_text(history: History, steps: Sequence[int]) -> str:
    """The user and agent messages of ``steps`` verbatim, one ``[step N] who: text`` each."""
    lines = []
    for i in steps:
        message = history[i].message
        who = "user" if history[i].kind == "user" else "agent"
        lines.append(f"[step {i}] {who}: {message.content}")
    return "\n".join(lines) or "(nothing said yet)"


def _pieces(history: History, pieces: Sequence[Piece]) -> str:
    blocks = []
    for p in pieces:
        span = f"line {p.first + 1}" if p.first == p.last else f"lines {p.first + 1}-{p.last + 1}"
        head = f"[step {p.step}] {call_label(history[p.step], p.result)}, {span}:"
        lines = [head, *p.lines(history)]
        lines += [f"  about: {p.summary}"] if p.summary else []
        lines += [f"  facts: {'; '.join(p.facts)}"] if p.facts else []
        lines += [f"  constraints: {'; '.join(p.constraints)}"] if p.constraints else []
        lines += [f"  hint: {p.hint}"] if p.hint else []
        blocks.append("\n".join(lines))
    return "\n".join(blocks) or "(no line selected)"
