"""The agent's numbered log (thoughts, actions, observations) and the checked line selections.

The folder selects observation lines by number; the runtime checks every selection and reads the
lines themselves from the history, so what the view shows is verbatim and a reopened session
renders the same lines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextfold.core.history import History, Step
from contextfold.core.messages import AssistantMessage
from contextfold.strategies.ufold.schemas import BlockAnswer

__all__ = ["Line", "Piece", "call_label", "check_block", "numbered_log", "observation_lines"]


@dataclass(frozen=True, slots=True)
class Line:
    """One line of the log; ``result`` is None for thought and action lines."""

    number: int
    step: int
    result: int | None
    offset: int
    text: str


@dataclass(frozen=True, slots=True)
class Piece:
    """Lines ``first..last`` (0-based, inclusive) of result ``result`` of step ``step``, with
    what the folder said about them (empty for the model-free variant).

    The extraction folder reads the log of the steps before the cut with every line numbered; only
    observation lines (the lines of tool results) may be selected, by range. A piece is one
    selected run of lines of one tool result, resolved to the step, the result and the line
    offsets.
    """

    step: int
    result: int
    first: int
    last: int
    summary: str = ""
    facts: tuple[str, ...] = ()
    constraints: tuple[str, ...] = ()
    hint: str = ""

    def lines(self, history: History) -> list[str]:
        content = history[self.step].results[self.result].content
        return content.splitlines()[self.first : self.last + 1]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"step": self.step, "result": self.result}
        out.update(first=self.first, last=self.last, summary=self.summary, hint=self.hint)
        out.update(facts=list(self.facts), constraints=list(self.constraints))
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Piece:
        return cls(
            int(data["step"]),
            int(data["result"]),
            int(data["first"]),
            int(data["last"]),
            str(data.get("summary", "")),
            tuple(str(f) for f in data.get("facts", ())),
            tuple(str(c) for c in data.get("constraints", ())),
            str(data.get("hint", "")),
        )


@dataclass(slots=True)
class Checked:
    """What :func:`check_block` kept of one block, and what it dropped."""

    pieces: list[Piece] = field(default_factory=list)
    dropped_block: bool = False
    dropped_facts: int = 0


def observation_lines(step: Step) -> list[tuple[int, int, str]]:
    """(result, offset, text) of every line of a step's tool results."""
    return [
        (r, k, text)
        for r, result in enumerate(step.results)
        for k, text in enumerate(result.content.splitlines() or [""])
    ]


def call_label(step: Step, result: int) -> str:
    """``name {arguments}`` of the call a result answers."""
    message = step.message
    answered = step.results[result]
    if isinstance(message, AssistantMessage):
        for call in message.tool_calls:
            if call.id == answered.tool_call_id:
                return f"{call.name} {call.arguments}"
    return answered.name or "tool"


def numbered_log(history: History, end: int) -> tuple[list[str], dict[int, Line]]:
    """The log of the agent's steps before ``end``, one text block per step with numbered
    lines, and every line by its number."""
    blocks: list[str] = []
    lines: dict[int, Line] = {}
    for step in history.steps[:end]:
        if step.kind != "assistant":
            continue
        rows: list[tuple[int | None, int, str, str]] = [
            (None, 0, "thought", t) for t in _thoughts(step)
        ]
        rows += [(None, 0, "action", a) for a in _actions(step)]
        rows += [(r, k, "observation", t) for r, k, t in observation_lines(step)]
        text = []
        for result, offset, kind, row in rows:
            number = len(lines) + 1
            lines[number] = Line(number, step.index, result, offset, row)
            text.append(f"{number} | [step {step.index}] {kind}: {row}")
        blocks.append("\n".join(text))
    return blocks, lines


def _thoughts(step: Step) -> list[str]:
    return (step.message.content or "").splitlines() if step.message.content else []


def _actions(step: Step) -> list[str]:
    message = step.message
    if not isinstance(message, AssistantMessage):
        return []
    return [f"{c.name}({c.arguments})" for c in message.tool_calls]


def check_block(block: BlockAnswer, lines: Mapping[int, Line]) -> Checked:
    """The block's lines as pieces (one per tool result), its verbatim facts kept; a bad
    range drops the block, a fact not found in the cited lines drops that fact.

    A range that does not exist, runs backwards or covers a line that is not an observation is
    dropped; a fact that is not a verbatim substring of the lines it cites is dropped; both are
    counted.
    """
    span = range(block.start_line, block.end_line + 1)
    cited = [lines.get(n) for n in span]
    if not cited or any(line is None or line.result is None for line in cited):
        return Checked(dropped_block=True)
    found = [line for line in cited if line is not None]
    text = "\n".join(line.text for line in found)
    facts = tuple(dict.fromkeys(f for f in block.facts if f.strip() and f in text))
    dropped = len([f for f in block.facts if f.strip()]) - len(facts)
    constraints = tuple(c.strip() for c in block.constraints if c.strip())
    pieces = [
        Piece(step, result, group[0].offset, group[-1].offset)
        for (step, result), group in _groups(found).items()
    ]
    notes = (block.summary.strip(), facts, constraints, block.hint.strip())
    pieces[0] = Piece(pieces[0].step, pieces[0].result, pieces[0].first, pieces[0].last, *notes)
    return Checked(pieces, False, dropped)


def _groups(found: Sequence[Line]) -> dict[tuple[int, int], list[Line]]:
    groups: dict[tuple[int, int], list[Line]] = {}
    for line in found:
        assert line.result is not None
        groups.setdefault((line.step, line.result), []).append(line)
    return groups
