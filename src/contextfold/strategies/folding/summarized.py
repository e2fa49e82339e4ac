"""The base of the summarising strategies (compact, summary, resum, iterresearch).

The steps before a cut are replaced by one summary the folder writes, the task and the latest
user message stay verbatim, and every folded step stays restorable; the state is derived from
the fold log alone, so a reopened session renders the same view without the model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from contextfold.core.folds import FoldCall, FoldRecord
from contextfold.core.history import History, Step
from contextfold.core.messages import UserMessage
from contextfold.core.view import View
from contextfold.strategies.folding.folder import ASK_REFUSALS, Folder
from contextfold.strategies.folding.source import FolderConfig
from contextfold.strategies.folding.steps import step_text
from contextfold.strategies.folding.view import folded_view
from contextfold.strategies.restore import RESTORE_TOOL, call_restore

__all__ = ["REFUSALS", "Plan", "SummarizingConfig", "SummarizingStrategy", "SummaryOutput"]

_MAX_BACKOFF = 6
NO_ROOM = "the previous summary leaves no room in the folder's context"
EMPTY = "the summary is empty"
NOT_SHORTER = "the summary is not shorter than what it replaces"
REFUSALS = (*ASK_REFUSALS, NO_ROOM, EMPTY, NOT_SHORTER)
"""How the reason of every fold these strategies refuse begins."""


class SummaryOutput(BaseModel):
    """What the folder returns: one summary text."""

    summary: str = Field(min_length=1, max_length=12000)


class SummarizingConfig(FolderConfig):
    budget: int = Field(32000, ge=1, description="Budget in tokens when none is given.")
    max_output: int = Field(512, ge=16, description="Tokens the folder may write per call.")


@dataclass(frozen=True, slots=True)
class Plan:
    """A fold to run: steps ``start`` to ``end`` (exclusive) join the summary."""

    start: int
    end: int


class SummarizingStrategy:
    """Summary of everything before a cut + the steps after it; folds outside render.

    The view is ``system, [task], summary, [latest user], steps since the cut``; every folded step
    is an elision with ``restore(step=N)``, and the agent is offered ``restore``. A subclass
    decides when to fold and how far (:meth:`plan`, cheap) and what to ask (its instruction and
    schema); this base runs the fold outside ``render``: the folder reads the previous summary and
    the steps to fold, in rolling chunks when they do not fit its context, and the result is
    validated (a schema, a non-empty summary shorter than what it replaces). Every attempt is a
    :class:`~contextfold.core.folds.FoldRecord`. After a rejected fold the next attempt waits
    ``2**k`` more steps (k rejections in a row, at most 6), unless the loop forces it
    (:meth:`compact`, when the view is over the budget).
    """

    kind: ClassVar[str] = "summary"
    instruction: ClassVar[str] = ""

    def __init__(self, config: SummarizingConfig, *, folder: Folder) -> None:
        self.config = config
        self.folder = folder
        self.name = config.type
        self._history: History | None = None
        self.forced_compactions = 0
        self._forced = False

    # -- state, derived from the fold log -------------------------------------------------
    def state(self, history: History) -> tuple[str, int, list[FoldRecord]]:
        """The current summary, the cut, and the rejections since the last accepted fold."""
        summary, cut = "", 0
        rejected: list[FoldRecord] = []
        for record in history.folds:
            if record.strategy != self.name:
                continue
            if record.accepted:
                summary, cut, rejected = str(record.output.get("summary", "")), record.end, []
            else:
                rejected.append(record)
        return summary, cut, rejected

    # -- deciding (cheap) ------------------------------------------------------------------
    def plan(self, history: History, budget: int, cut: int) -> Plan | None:
        """The fold due now, or None."""
        raise NotImplementedError

    def may_retry(self, history: History, rejected: list[FoldRecord]) -> bool:
        """After ``k`` rejected folds in a row, wait ``2**k`` steps (k at most 6)."""
        if not rejected:
            return True
        wait = int(2 ** min(len(rejected), _MAX_BACKOFF))
        return len(history) >= rejected[-1].at_step + wait

    def forced_plan(self, history: History, cut: int) -> Plan | None:
        """The fold to run when the budget forces one: everything but the last step."""
        end = len(history) - 1
        return Plan(cut, end) if end > cut else None

    def observe(self, step: Step, history: History) -> None:
        """Nothing to do: what is due is decided in :meth:`fold`, from the history."""

    # -- folding ---------------------------------------------------------------------------
    def fold(self, history: History, budget: int | None) -> list[FoldRecord]:
        summary, cut, rejected = self.state(history)
        if self._forced:
            plan = self.forced_plan(history, cut)
            self._forced = False
        elif not self.may_retry(history, rejected):
            return []
        else:
            plan = self.plan(history, budget or self.config.budget, cut)
        if plan is None:
            return []
        record = self._run(history, plan, summary)
        history.record_fold(record)
        return [record]

    def _run(self, history: History, plan: Plan, previous: str) -> FoldRecord:
        steps = [history[i] for i in range(plan.start, plan.end)]
        text, calls, reason = self._rolling(steps, previous)
        if reason is None:
            reason = self.validate(text, steps, previous)
        accepted = reason is None
        output: Mapping[str, Any] = {"summary": text} if accepted else {"raw": text}
        return FoldRecord(
            self.name,
            self.kind,
            plan.start,
            plan.end,
            len(history),
            accepted,
            output,
            reason,
            tuple(calls),
        )

    def _rolling(self, steps: list[Step], previous: str) -> tuple[str, list[FoldCall], str | None]:
        """Fold the steps into the summary, chunk by chunk; (text, calls, reason if refused)."""
        limit = self.config.max_output
        room = self.folder.room(self.instruction, max_tokens=limit, reserved=previous)
        if room < 256:
            return previous, [], NO_ROOM
        calls: list[FoldCall] = []
        text = previous
        for chunk in self.folder.chunks([step_text(s) for s in steps], room):
            answer = self.folder.ask(
                self.instruction, self.prompt(text, chunk), SummaryOutput, max_tokens=limit
            )
            calls += answer.calls
            if answer.value is None:
                return answer.raw, calls, answer.reason
            text = answer.value.summary.strip()
        return text, calls, None

    def prompt(self, previous: str, chunk: str) -> str:
        """The folder's input: the summary so far and the steps to add to it."""
        head = f"Summary so far:\n{previous}" if previous else "Summary so far: (none yet)"
        return f"{head}\n\nSteps to fold into it:\n{chunk}"

    def validate(self, text: str, steps: list[Step], previous: str) -> str | None:
        """Why the new summary cannot be used, or None."""
        if not text.strip():
            return EMPTY
        replaced = (
            sum(s.total_tokens for s in steps) + self.folder.counter.count_batch([previous])[0]
        )
        if self.folder.counter.count_batch([text])[0] >= replaced:
            return NOT_SHORTER
        return None

    # -- compaction on demand --------------------------------------------------------------
    def compact(self, history: History, budget: int) -> bool:
        _, cut, _ = self.state(history)
        if self.forced_plan(history, cut) is None:
            return False
        self._forced = True
        self.forced_compactions += 1
        return True

    # -- tools -----------------------------------------------------------------------------
    def tools(self) -> list[dict[str, Any]]:
        return [RESTORE_TOOL]

    def call_tool(self, name: str, arguments: Mapping[str, Any], history: History) -> str:
        return call_restore(self.name, name, arguments, history)

    # -- rendering (pure) ------------------------------------------------------------------
    def render(self, history: History, budget: int | None) -> View:
        summary, cut, _ = self.state(history)
        note = self._summary_message(summary, cut) if cut else None
        return folded_view(history, cut, note, reason=self.kind, strategy=self.name)

    def _summary_message(self, summary: str, cut: int) -> UserMessage:
        return UserMessage(
            f"[Summary of steps 0-{cut - 1}, written by {self.name}; restore(step=N) shows "
            f"any of them verbatim]\n{summary}"
        )
