"""The in-memory session store, :class:`MemoryStore`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contextfold.core.errors import StoreConflictError
from contextfold.core.folds import FoldRecord
from contextfold.core.history import Step
from contextfold.core.ledger import LedgerEntry
from contextfold.core.messages import AssistantMessage, Message, SystemMessage, from_openai
from contextfold.core.protocols import SessionRecord
from contextfold.core.store._common import (
    Closing,
    call_record,
    check_call_at,
    check_call_step,
    check_fold,
    check_step,
    json_copy,
    missing,
    not_next,
    now,
    reply_row,
)
from contextfold.core.store._ledger import stamped

__all__ = ["MemoryStore"]


@dataclass(slots=True)
class _MemorySession:
    system: SystemMessage | None
    counter: str
    meta: dict[str, Any]
    steps: list[Step]
    calls: list[dict[str, Any]]
    folds: list[FoldRecord]
    replies: list[tuple[int, str]]
    """Each reply kept: the steps it answered, the message as JSON."""


class MemoryStore(Closing):
    """Sessions in a dict: for replay, benchmarks and tests. Nothing survives the process.

    ``close`` and the context manager come from :class:`Closing` (nothing to release).
    """

    def __init__(self) -> None:
        self._sessions: dict[str, _MemorySession] = {}
        self._ledger: list[LedgerEntry] = []

    def create_session(
        self,
        session_id: str,
        *,
        system: SystemMessage | None,
        counter: str,
        meta: Mapping[str, Any],
    ) -> None:
        if session_id in self._sessions:
            raise StoreConflictError(f"session {session_id!r} already exists in the memory store")
        copied = json_copy(meta, f"metadata of session {session_id!r}")
        self._sessions[session_id] = _MemorySession(system, counter, copied, [], [], [], [])

    def append_step(self, session_id: str, step: Step) -> None:
        session = self._get(session_id)
        check_step(session_id, step)
        if step.index != len(session.steps):
            raise not_next(session_id, step.index, len(session.steps))
        session.steps.append(step)

    def append_fold(self, session_id: str, record: FoldRecord) -> None:
        session = self._get(session_id)
        check_fold(session_id, record, len(session.steps))
        where = f"fold record of session {session_id!r}"
        session.folds.append(FoldRecord.from_json(json_copy(record.to_json(), where)))

    def load_session(self, session_id: str) -> SessionRecord:
        session = self._get(session_id)
        return SessionRecord(
            session_id=session_id,
            system=session.system,
            counter=session.counter,
            steps=list(session.steps),
            meta=json_copy(session.meta, "metadata"),
            folds=list(session.folds),
        )

    def list_sessions(self) -> list[str]:
        return sorted(self._sessions)

    def record_call(
        self,
        session_id: str,
        *,
        step: int,
        messages: Sequence[Message],
        usage: Mapping[str, int],
    ) -> None:
        """Keep the messages one model call was sent and the usage it reported; the session
        must hold exactly ``step`` steps (those the call was sent)."""
        session = self._get(session_id)
        check_call_step(session_id, step)
        check_call_at(session_id, step, len(session.steps))
        copied = json_copy(usage, f"usage of a call in session {session_id!r}")
        record = call_record(len(session.calls), step, list(messages), copied, now())
        session.calls.append(record)

    def load_calls(self, session_id: str) -> list[dict[str, Any]]:
        """The recorded calls in order: dicts with call, step, messages, usage, created_at."""
        session = self._get(session_id)
        return [
            {**c, "messages": list(c["messages"]), "usage": dict(c["usage"])} for c in session.calls
        ]

    def record_reply(self, session_id: str, *, step: int, message: AssistantMessage) -> None:
        """Keep a reply given to the session's first ``step`` steps (it must hold them)."""
        session = self._get(session_id)
        row = reply_row(session_id, step, message)
        check_call_at(session_id, step, len(session.steps))
        session.replies.append((step, row))

    def load_replies(self, session_id: str, *, step: int) -> list[AssistantMessage]:
        """The replies kept for the session's first ``step`` steps, the latest first."""
        rows = [row for at, row in reversed(self._get(session_id).replies) if at == step]
        return [_reply(row) for row in rows]

    def record_ledger(self, entry: LedgerEntry) -> None:
        """Keep one upstream call's entry."""
        self._ledger.append(stamped(entry))

    def load_ledger(self) -> list[LedgerEntry]:
        """Every entry, in the order the calls were made."""
        return list(self._ledger)

    def _get(self, session_id: str) -> _MemorySession:
        session = self._sessions.get(session_id)
        if session is None:
            raise missing(session_id, "the memory store")
        return session


def _reply(row: str) -> AssistantMessage:
    message = from_openai(json.loads(row)[0])
    assert isinstance(message, AssistantMessage)
    return message
