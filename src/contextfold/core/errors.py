"""The exception tree (drawn on :class:`ContextFoldError`). Every error names the thing that is
wrong and, where it can, what to do.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "ContextBudgetError",
    "ContextFoldError",
    "HistoryError",
    "ImportFormatError",
    "MessageFormatError",
    "ModelError",
    "StoreConflictError",
    "StoreError",
    "TokenizerError",
    "ViewError",
]


class ContextFoldError(Exception):
    """Base class of every error contextfold raises on purpose.

    ::

        ContextFoldError
        ├── MessageFormatError     a chat message that is not valid OpenAI format
        ├── HistoryError           an append that would break the history's invariants
        ├── StoreError             a store that cannot be opened, or a session that is missing
        │   └── StoreConflictError a write that lost a race (session exists, index not next)
        ├── ViewError              a strategy rendered an invalid view (names strategy and step)
        ├── ConfigError            a strategy spec or option that cannot be built
        ├── TokenizerError         a tokenizer that cannot be loaded offline
        ├── ImportFormatError      a recorded trajectory that cannot be read (names file, position)
        ├── ModelError             a model backend that cannot answer (after its retries)
        ├── CalculatorError        an expression the safe calculator refuses (envs.calculator)
        ├── DocumentError          a docx/xlsx/pptx that does not open (core.documents)
        └── ContextBudgetError     a view over the context budget that compaction could not fix
    """


class MessageFormatError(ContextFoldError, ValueError):
    """A chat message is not valid OpenAI chat format.

    ``at`` names where, when known: a field inside the message (``tool_calls[0].id``) or, once
    a caller that knows the message's place has said so (:meth:`under`), the whole position
    (``messages[3].tool_calls[0].id``)."""

    def __init__(self, problem: str, *, at: str = "") -> None:
        super().__init__(f"{at}: {problem}" if at else problem)
        self.at = at
        self.problem = problem

    def under(self, position: str) -> MessageFormatError:
        """The same problem, placed under ``position`` (``messages[3]``)."""
        if not self.at:
            at = position
        elif self.at.startswith("["):
            at = position + self.at
        else:
            at = f"{position}.{self.at}"
        return MessageFormatError(self.problem, at=at)


class HistoryError(ContextFoldError, ValueError):
    """An append would break the history's invariants (nothing is written)."""


class StoreError(ContextFoldError):
    """A store cannot be opened or written, or a session does not exist."""


class StoreConflictError(StoreError):
    """A write found the store moved on: the session already exists, or its next index is not
    the one written (another writer appended first). Nothing was written."""


class ViewError(ContextFoldError):
    """A strategy returned a view that breaks an invariant."""

    def __init__(self, strategy: str, step: int | None, problem: str) -> None:
        where = f"at step {step}" if step is not None else "before any step"
        super().__init__(f"strategy {strategy!r} rendered an invalid view {where}: {problem}")
        self.strategy = strategy
        self.step = step
        self.problem = problem


class ConfigError(ContextFoldError, ValueError):
    """A strategy spec, model profile or option cannot be resolved."""


class TokenizerError(ContextFoldError):
    """A tokenizer cannot be loaded from local files."""


class ImportFormatError(ContextFoldError, ValueError):
    """A recorded trajectory cannot be read; the message names the file and position."""

    def __init__(self, path: str, position: str, problem: str) -> None:
        super().__init__(f"{path}: {position}: {problem}")
        self.path = path
        self.position = position
        self.problem = problem


class ModelError(ContextFoldError):
    """A model cannot answer: a server failure after retries, a missing package or key, an
    exhausted script, a prompt over the context size."""


class ContextBudgetError(ContextFoldError):
    """The view is over the context budget: the strategy cannot compact, or its forced
    compaction did not bring the view under the budget.

    Nothing is lost: every step is already in the history (and its store)."""

    def __init__(
        self,
        strategy: str,
        tokens: int,
        budget: int,
        session: str | None,
        *,
        compacted: bool = True,
    ) -> None:
        where = f" in session {session!r}" if session else ""
        why = (
            "even after forced compaction"
            if compacted
            else "and it cannot compact (or had nothing left to compact)"
        )
        others = ", ".join(s for s in ("refold", "compact", "summary") if s != strategy)
        advice = (
            f"raise the budget, or pick a strategy that compacts ({others})"
            if not compacted
            else "raise the budget: what is left (the system prompt, the latest turns) does not fit"
        )
        super().__init__(
            f"strategy {strategy!r} rendered {tokens:,} tokens{where}, over the budget of "
            f"{budget:,} {why}; {advice} (the history is intact and can be resumed)"
        )
        self.strategy = strategy
        self.tokens = tokens
        self.budget = budget
        self.compacted = compacted
