"""The ``ufold`` strategy: U-Fold's intent-aware folding, rebuilt at every new user message.

Two rules keep it from costing more than the history as it is: long outputs are trimmed before
they enter the cache (:mod:`.inturn`) and a rebuild is adopted only when it pays for the cache
rewrite (:mod:`.rebuild`); ``folder=none`` is the model-free variant (:mod:`.select`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Literal

from pydantic import Field

from contextfold.core.errors import ConfigError
from contextfold.core.experience import Experience
from contextfold.core.folds import FoldRecord
from contextfold.core.history import History, Step
from contextfold.core.meter import PRICE_TABLES
from contextfold.core.view import View
from contextfold.strategies.folding.folder import Folder
from contextfold.strategies.folding.source import OptionalFolderConfig
from contextfold.strategies.refold.cost import CostRule
from contextfold.strategies.restore import RESTORE_TOOL, call_restore, calls_made
from contextfold.strategies.ufold.fold import NoRoom, Notes, TurnFolder, notes_from, notes_text
from contextfold.strategies.ufold.inturn import InTurn
from contextfold.strategies.ufold.rebuild import weigh, worth_asking
from contextfold.strategies.ufold.select import dialogue_steps, salient, select_lines
from contextfold.strategies.ufold.view import ViewOptions, dialogue_text, render_view

__all__ = ["UfoldConfig", "UfoldStrategy"]


class UfoldConfig(OptionalFolderConfig):
    type: Literal["ufold"] = "ufold"
    summarize: bool = Field(True, description="Summary and to-do list (false: raw dialogue).")
    extract: bool = Field(True, description="Extract observation lines (false: outputs in full).")
    trigger: Literal["turn", "change"] = Field(
        "turn", description="Fold at every user message, or when the folder sees intent change."
    )
    budget: int = Field(32000, ge=1, description="Budget in tokens when none is given.")
    max_output: int = Field(768, ge=16, description="Tokens the folder may write per call.")
    output_chars: int = Field(400, ge=0, description="Tool output characters the summarizer reads.")
    extract_share: float = Field(
        0.4, gt=0.0, le=1.0, description="folder=none: budget share the selected lines may take."
    )
    ranked: int = Field(3, ge=0, description="folder=none: lines added by BM25 rank.")
    inturn: bool = Field(
        True, description="Trim long tool outputs of the current turn before they are sent."
    )
    inturn_min: int = Field(256, ge=1, description="Tokens a tool output needs to be trimmed.")
    rebuild: Literal["always", "cost"] = Field(
        "cost", description="Adopt every fold, or only those that pay for the cache rewrite."
    )
    prices: str = Field("default", description="Price table the rebuild rule uses.")


class UfoldStrategy:
    """Selected context (summary, to-do, verbatim tool lines) + the current user turn.

    At each new user message the folder updates a summary with a to-do list and selects observation
    lines by range, each block checked by the runtime; the view is derived from the latest accepted
    fold record, byte-identical within a user turn. See :class:`UfoldConfig` and
    docs/strategies/ufold.md.
    """

    Config = UfoldConfig

    def __init__(self, config: UfoldConfig, *, folder: Folder | None) -> None:
        if folder is None and config.trigger == "change":
            raise ConfigError("ufold trigger=change needs a folder to judge the user's intent")
        if folder is not None and not (config.summarize or config.extract):
            raise ConfigError("ufold summarize=false extract=false folds nothing; use full")
        if config.prices not in PRICE_TABLES:
            known = ", ".join(PRICE_TABLES)
            raise ConfigError(f"ufold: unknown price table {config.prices!r}; known: {known}")
        self.config, self.folder, self.name = config, folder, "ufold"
        self.rule = CostRule(PRICE_TABLES[config.prices])
        trims = config.extract and config.inturn
        self.inturn = InTurn(min_tokens=config.inturn_min) if trims else None
        if folder is None:  # the dialogue verbatim is the model-free summary
            conversation: Literal["notes", "dialogue", "none"] = (
                "dialogue" if config.summarize else "none"
            )
        else:
            conversation = "notes" if config.summarize else "dialogue"
        self.options = ViewOptions(conversation, config.extract)
        self._experience: Experience | None = None
        self._ended: History | None = None

    def share(self, experience: Experience) -> None:
        """The rebuild rule learns the calls to come from the workload's ended sessions."""
        self._experience = experience
        self.rule = replace(self.rule, experience=experience)

    def end(self, history: History) -> None:
        if self._experience is None or self._ended is history:
            return
        self._ended = history
        self._experience.record(calls=calls_made(history))

    # -- state, derived from the fold log -------------------------------------------------
    def latest(self, history: History) -> FoldRecord | None:
        """The latest accepted and adopted turn fold of this strategy."""
        for record in reversed(history.folds):
            if self._adopted(record):
                return record
        return None

    def _adopted(self, record: FoldRecord) -> bool:
        mine = record.strategy == self.name and record.kind == "turn" and record.accepted
        return mine and bool(record.output.get("adopted", True))

    def due(self, history: History) -> int | None:
        """The user message to fold at, when it has not been tried yet."""
        user = history.latest_user_index
        if not user:
            return None
        tried = any(r.strategy == self.name and r.end == user for r in history.folds)
        return None if tried else user

    def observe(self, step: Step, history: History) -> None:
        """Nothing to do: a fold is due when a new user message is in the history."""

    # -- folding ---------------------------------------------------------------------------
    def fold(self, history: History, budget: int | None) -> list[FoldRecord]:
        user = self.due(history)
        if user is None:
            return []
        latest = self.latest(history)
        if self.folder is None:
            records = [self._model_free(history, user, budget or self.config.budget)]
        elif not self._worth_asking(history, latest, user, budget):
            records = [self._not_asked(history, user)]
        else:
            records = self._with_folder(self.folder, history, user, latest)
        records = [self._weighed(history, r, latest, user, budget) for r in records]
        for record in records:
            history.record_fold(record)
        return records

    def _weighed(
        self,
        history: History,
        record: FoldRecord,
        latest: FoldRecord | None,
        user: int,
        budget: int | None,
    ) -> FoldRecord:
        """The record with the rebuild rule's figures and verdict (``rebuild=cost``)."""
        if self.config.rebuild == "always" or record.kind != "turn" or not record.accepted:
            return record
        if record.output.get("asked") is False:  # already judged: no rebuild could pay
            return record
        old, new = self._render(history, latest), self._render(history, record)
        adopted = sum(self._adopted(r) for r in history.folds)
        figures = weigh(old, new, history, user, rule=self.rule, budget=budget, adopted=adopted)
        return replace(record, output={**record.output, **figures})

    def _worth_asking(
        self, history: History, latest: FoldRecord | None, user: int, budget: int | None
    ) -> bool:
        """Under ``rebuild=cost``, whether even the best rebuild could pay for the folder's
        calls (each is sent the steps since the last fold) and the cache rewrite."""
        config = self.config
        if config.rebuild == "always":
            return True
        start = int(latest.output.get("read_to", latest.end)) if latest else 0
        calls = max(int(config.summarize) + int(config.extract), 1)
        asked = calls * sum(step.total_tokens for step in history.steps[start : user + 1])
        adopted = sum(self._adopted(r) for r in history.folds)
        old = self._render(history, latest)
        return worth_asking(
            old, history, user, rule=self.rule, budget=budget, adopted=adopted, asked=asked
        )

    def _not_asked(self, history: History, user: int) -> FoldRecord:
        """The record of a turn the folder was not asked about (no rebuild could pay)."""
        output = {"adopted": False, "asked": False}  # the next fold starts from ``latest``
        return FoldRecord(self.name, "turn", 0, user, len(history), True, output)

    def _model_free(self, history: History, user: int, budget: int) -> FoldRecord:
        room = int(self.config.extract_share * budget)
        ranked = self.config.ranked
        pieces = (
            select_lines(history, user, room=room, ranked=ranked) if self.config.extract else []
        )
        output: dict[str, Any] = {"pieces": [p.to_json() for p in pieces]}
        output |= {"model_free": True, "read_to": user + 1}
        return FoldRecord(self.name, "turn", 0, user, len(history), True, output)

    def _with_folder(
        self, folder: Folder, history: History, user: int, latest: FoldRecord | None
    ) -> list[FoldRecord]:
        asker = self._asker(folder)
        start = int(latest.output.get("read_to", latest.end)) if latest else 0
        notes = notes_from(latest.output) if latest else Notes()
        if self.config.trigger == "change" and latest is not None:
            changed = asker.intent_changed(history, notes, start, user)
            accepted = not isinstance(changed, str)
            output = {"changed": changed} if accepted else {"raw": asker.raw}
            intent = FoldRecord(
                self.name,
                "intent",
                start,
                user,
                len(history),
                accepted,
                output,
                None if accepted else str(changed),
                tuple(asker.calls),
            )
            if changed is False:
                return [intent]
            asker = self._asker(folder)
            return [intent, self._turn(asker, history, user, notes, start)]
        return [self._turn(asker, history, user, notes, start)]

    def _asker(self, folder: Folder) -> TurnFolder:
        config = self.config
        return TurnFolder(folder, max_output=config.max_output, output_chars=config.output_chars)

    def _turn(
        self, asker: TurnFolder, history: History, user: int, notes: Notes, start: int
    ) -> FoldRecord:
        try:
            output, reason = self._ask(asker, history, user, notes, start)
        except NoRoom as exc:
            output, reason = {}, str(exc)
        accepted = reason is None
        return FoldRecord(
            self.name,
            "turn",
            0,
            user,
            len(history),
            accepted,
            output if accepted else {"raw": asker.raw},
            reason,
            tuple(asker.calls),
        )

    def _ask(
        self, asker: TurnFolder, history: History, user: int, notes: Notes, start: int
    ) -> tuple[dict[str, Any], str | None]:
        output: dict[str, Any] = {"read_to": user + 1, "model_free": False}
        if self.config.summarize:
            reason = asker.summarize(history, notes, start, user)
            if reason is not None:
                return output, reason
            output |= {"summary": notes.summary, "todo": notes.todo}
            output["kept_users"] = _missed_users(history, user, notes_text(notes))
        if self.config.extract:
            conversation = (
                notes_text(notes)
                if self.config.summarize
                else dialogue_text(history, dialogue_steps(history, user + 1))
            )
            found = asker.extract(history, conversation, user)
            if isinstance(found, str):
                return output, found
            output["pieces"] = [p.to_json() for p in found.pieces]
            output |= {"dropped_blocks": found.dropped_blocks}
            output |= {"dropped_facts": found.dropped_facts}
        return output, None

    # -- tools -----------------------------------------------------------------------------
    def tools(self) -> list[dict[str, Any]]:
        return [RESTORE_TOOL]

    def call_tool(self, name: str, arguments: Mapping[str, Any], history: History) -> str:
        return call_restore(self.name, name, arguments, history)

    # -- rendering (pure) ------------------------------------------------------------------
    def render(self, history: History, budget: int | None) -> View:
        return self._render(history, self.latest(history))

    def _render(self, history: History, fold: FoldRecord | None) -> View:
        output, cut = (fold.output, fold.end) if fold else (None, 0)
        return render_view(history, output, cut, self.options, self.name, inturn=self.inturn)


def _missed_users(history: History, user: int, notes: str) -> list[int]:
    """User messages before ``user`` with a salient value the notes do not hold."""
    lowered = notes.lower()
    return [
        s.index
        for s in history.steps[:user]
        if s.kind == "user" and any(t not in lowered for t in salient(s.message.content or ""))
    ]
