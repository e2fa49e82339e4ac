"""Helpers shared by the stores (memory, SQLite, PostgreSQL): JSON, checks, error texts."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self

from contextfold.core.errors import StoreConflictError, StoreError
from contextfold.core.folds import FoldRecord
from contextfold.core.history import Step
from contextfold.core.messages import AssistantMessage, Message, SystemMessage, to_openai


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def dumps(value: Any, what: str) -> str:
    """Compact JSON; non-ASCII kept as is unless the text holds lone surrogates (then escaped)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"{what} is not JSON-serializable: {exc}") from exc
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":"), allow_nan=False)
    return text


def json_copy(value: Mapping[str, Any], what: str) -> dict[str, Any]:
    """The value as it comes back from storage (what :class:`MemoryStore` keeps)."""
    copied: dict[str, Any] = json.loads(dumps(dict(value), what))
    return copied


def check_step(session_id: str, step: Step) -> None:
    n = len(step.messages)
    if n == 0 or len(step.tokens) != n or len(step.hashes) != n:
        raise StoreError(
            f"session {session_id!r}: step {step.index} has {n} messages, {len(step.tokens)} "
            f"token counts and {len(step.hashes)} hashes; build steps with make_step"
        )


def check_fold(session_id: str, record: FoldRecord, steps: int) -> None:
    if not 0 <= record.start <= record.end <= steps:
        raise StoreError(
            f"session {session_id!r}: a fold record covers steps {record.start} to "
            f"{record.end}, but the session has {steps} steps; nothing was written"
        )


def check_call_step(session_id: str, step: int) -> None:
    if step < 0:
        raise StoreError(f"session {session_id!r}: a call's step index must be >= 0, got {step}")


def check_call_at(session_id: str, step: int, steps: int) -> None:
    """A call record points at the step its reply produces: the session must hold exactly the
    ``step`` steps the call was sent (more means another writer appended after the prompt was
    built, fewer that the prompt held steps that were never stored)."""
    if step != steps:
        raise StoreConflictError(
            f"session {session_id!r}: a call sent {step} steps is recorded, but the session "
            f"holds {steps}; nothing was written"
        )


def call_record(
    call_idx: int, step: int, messages: list[Message], usage: dict[str, Any], created_at: str
) -> dict[str, Any]:
    return {
        "call": call_idx,
        "step": step,
        "messages": messages,
        "usage": usage,
        "created_at": created_at,
    }


def missing(session_id: str, where: str) -> StoreError:
    return StoreError(f"session {session_id!r} does not exist in {where}")


def not_next(session_id: str, index: int, expected: int) -> StoreConflictError:
    return StoreConflictError(
        f"session {session_id!r}: step index {index} is not the next index {expected}; "
        "nothing was written"
    )


def session_row(
    session_id: str, system: SystemMessage | None, meta: Mapping[str, Any]
) -> tuple[str | None, str]:
    """The JSON columns of a new session: its system message and its metadata."""
    system_json = None if system is None else dumps(to_openai(system), "system message")
    return system_json, dumps(dict(meta), f"metadata of session {session_id!r}")


def step_row(session_id: str, step: Step) -> tuple[str, int, str, str, str]:
    """A step's row, checked: session, index, and the messages, token counts and hashes as JSON."""
    check_step(session_id, step)
    return (
        session_id,
        step.index,
        dumps([to_openai(m) for m in step.messages], f"step {step.index}"),
        dumps(list(step.tokens), f"token counts of step {step.index}"),
        dumps(list(step.hashes), f"hashes of step {step.index}"),
    )


def call_row(
    session_id: str, step: int, messages: Sequence[Message], usage: Mapping[str, int]
) -> tuple[str, str]:
    """A call's JSON columns, checked: the messages it was sent and the usage it reported."""
    check_call_step(session_id, step)
    where = f"a call in session {session_id!r}"
    messages_json = dumps([to_openai(m) for m in messages], f"messages of {where}")
    return messages_json, dumps(dict(usage), f"usage of {where}")


def reply_row(session_id: str, step: int, message: AssistantMessage) -> str:
    """A reply's JSON column, checked: the message as a one-message list."""
    if step < 0:
        raise StoreError(f"session {session_id!r}: a reply's step index must be >= 0, got {step}")
    return dumps([to_openai(message)], f"a reply in session {session_id!r}")


class Closing:
    """A store usable as a context manager: ``with`` closes it on the way out."""

    def close(self) -> None:
        """Release what the store holds (nothing here)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class Connected(Closing):
    """A store holding one database connection: closed once, usable as a context manager."""

    _conn: Any

    def close(self) -> None:
        """Close the connection (idempotent); later calls raise :class:`StoreError`."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
