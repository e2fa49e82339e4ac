"""ufold's folder calls: conversation summarization, dynamic data extraction, intent check.

Each runs through :meth:`~contextfold.strategies.folding.Folder.ask` (schema-constrained JSON,
one repair round; a failure is a reason, never an exception) and over rolling chunks when its
input does not fit the folder's context. Tool outputs reach the summarizer clipped to
``output_chars`` (the extraction reads them whole, by numbered line); a summary is not
allowed to replace them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextfold.core.folds import FoldCall
from contextfold.core.history import History, Step
from contextfold.core.messages import AssistantMessage
from contextfold.strategies.folding.folder import ASK_REFUSALS, Folder
from contextfold.strategies.ufold.log import Piece, check_block, numbered_log
from contextfold.strategies.ufold.prompts import EXTRACT, INTENT, SUMMARIZE
from contextfold.strategies.ufold.schemas import ExtractAnswer, IntentAnswer, SummaryAnswer

__all__ = ["REFUSALS", "Extraction", "NoRoom", "Notes", "TurnFolder", "notes_from", "notes_text"]

_MIN_ROOM = 256
EMPTY = "the summary is empty"
NO_ROOM = "the folder's context has no room left"
UNANSWERED = ("no summary", "no extraction", "no answer")
"""The reasons of a failed ask that gave none (:meth:`Folder.ask` always gives one)."""
REFUSALS = (*ASK_REFUSALS, EMPTY, NO_ROOM, *UNANSWERED)
"""How the reason of every refused ufold record (a turn, or an intent check) begins."""


class NoRoom(Exception):
    """The text that goes with every chunk leaves the folder no room for input."""


@dataclass(slots=True)
class Notes:
    """A summary and its to-do list (each item: task, facts)."""

    summary: str = ""
    todo: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class Extraction:
    """The checked pieces of an extraction and what the checks dropped."""

    pieces: list[Piece] = field(default_factory=list)
    dropped_blocks: int = 0
    dropped_facts: int = 0


def notes_text(notes: Notes) -> str:
    """The notes as the folder and the agent read them."""
    if not notes.summary:
        return "(no notes yet)"
    lines = [notes.summary, "", "To-do (steps not done yet):"]
    for k, item in enumerate(notes.todo, 1):
        facts = "; ".join(str(f) for f in item.get("facts", ()))
        lines.append(f"{k}. {item.get('task', '')}" + (f" (facts: {facts})" if facts else ""))
    if not notes.todo:
        lines.append("(nothing left)")
    return "\n".join(lines)


class TurnFolder:
    """Asks the folder for one user turn's summary, extraction or intent check."""

    def __init__(self, folder: Folder, *, max_output: int, output_chars: int) -> None:
        self.folder, self.max_output, self.output_chars = folder, max_output, output_chars
        self.calls: list[FoldCall] = []
        self.raw = ""
        """The last reply that could not be used (kept in a refused fold's record)."""

    def summarize(self, history: History, notes: Notes, start: int, end: int) -> str | None:
        """Fold steps ``start..end`` (inclusive) into ``notes``; why it failed, or None."""
        blocks = [self.turn_text(s) for s in history.steps[start : end + 1]]
        for chunk in self._chunks(SUMMARIZE, blocks, notes_text(notes)):
            prompt = f"Notes so far:\n{notes_text(notes)}\n\nConversation since:\n{chunk}"
            answer = self.folder.ask(SUMMARIZE, prompt, SummaryAnswer, max_tokens=self.max_output)
            self.calls += answer.calls
            if answer.value is None:
                self.raw = answer.raw
                return answer.reason or UNANSWERED[0]
            notes.summary = answer.value.summary.strip()
            notes.todo = [item.model_dump() for item in answer.value.todo]
        return None if notes.summary else EMPTY

    def extract(self, history: History, conversation: str, cut: int) -> Extraction | str:
        """The checked pieces of the observations before ``cut``, or why it failed."""
        blocks, lines = numbered_log(history, cut)
        tools = sorted(_tool_names(history.steps[:cut])) or ["(none)"]
        head = f"Tools used: {', '.join(tools)}\n\nConversation:\n{conversation}"
        found = Extraction()
        for chunk in self._chunks(EXTRACT, blocks, head):
            prompt = f"{head}\n\nNumbered log:\n{chunk}"
            answer = self.folder.ask(EXTRACT, prompt, ExtractAnswer, max_tokens=self.max_output)
            self.calls += answer.calls
            if answer.value is None:
                self.raw = answer.raw
                return answer.reason or UNANSWERED[1]
            for block in answer.value.blocks:
                checked = check_block(block, lines)
                found.pieces += checked.pieces
                found.dropped_blocks += checked.dropped_block
                found.dropped_facts += checked.dropped_facts
        return found

    def intent_changed(self, history: History, notes: Notes, start: int, end: int) -> bool | str:
        """Whether the user's intent changed in steps ``start..end``, or why it failed."""
        blocks = [self.turn_text(s) for s in history.steps[start : end + 1]]
        chunks = self._chunks(INTENT, blocks, notes_text(notes))
        prompt = f"Notes:\n{notes_text(notes)}\n\nSince then:\n{chunks[-1] if chunks else ''}"
        answer = self.folder.ask(INTENT, prompt, IntentAnswer, max_tokens=self.max_output)
        self.calls += answer.calls
        if answer.value is None:
            self.raw = answer.raw
            return answer.reason or UNANSWERED[2]
        return answer.value.changed

    def _chunks(self, instruction: str, blocks: Sequence[str], reserved: str) -> list[str]:
        room = self.folder.room(instruction, max_tokens=self.max_output, reserved=reserved)
        if room < _MIN_ROOM:
            raise NoRoom(f"{NO_ROOM} ({self.folder.context_tokens} tokens)")
        return self.folder.chunks(blocks, room) if blocks else [""]

    def turn_text(self, step: Step) -> str:
        """A step for the summarizer: messages, calls, and tool outputs clipped."""
        head = step.message
        if not isinstance(head, AssistantMessage):
            return f"[step {step.index}] user: {head.content}"
        lines = [f"[step {step.index}] agent: {head.content}"] if head.content else []
        lines += [
            f"[step {step.index}] agent calls {c.name}({c.arguments})" for c in head.tool_calls
        ]
        for result in step.results:
            text = _clip(result.content, self.output_chars)
            lines.append(f"[step {step.index}] {result.name or 'tool'} returned: {text}")
        return "\n".join(lines)


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]} [... {len(text) - limit} more characters]"


def _tool_names(steps: Sequence[Step]) -> set[str]:
    return {
        c.name
        for s in steps
        if isinstance(s.message, AssistantMessage)
        for c in s.message.tool_calls
    }


def notes_from(output: Mapping[str, Any]) -> Notes:
    """The notes a fold record holds."""
    return Notes(str(output.get("summary", "")), [dict(t) for t in output.get("todo", ())])
