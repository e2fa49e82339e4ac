"""Helpers shared by the stores (memory, SQLite, PostgreSQL): JSON, checks, error texts."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from contextfold.core.errors import StoreConflictError, StoreError
from contextfold.core.folds import FoldRecord
from contextfold.core.history import Step
from contextfold.core.messages import Message


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _dumps(value: Any, what: str) -> str:
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


def _json_copy(value: Mapping[str, Any], what: str) -> dict[str, Any]:
    """The value as it comes back from storage (what :class:`MemoryStore` keeps)."""
    copied: dict[str, Any] = json.loads(_dumps(dict(value), what))
    return copied


def _check_step(session_id: str, step: Step) -> None:
    n = len(step.messages)
    if n == 0 or len(step.tokens) != n or len(step.hashes) != n:
        raise StoreError(
            f"session {session_id!r}: step {step.index} has {n} messages, {len(step.tokens)} "
            f"token counts and {len(step.hashes)} hashes; build steps with make_step"
        )


def _check_fold(session_id: str, record: FoldRecord, steps: int) -> None:
    if not 0 <= record.start <= record.end <= steps:
        raise StoreError(
            f"session {session_id!r}: a fold record covers steps {record.start} to "
            f"{record.end}, but the session has {steps} steps; nothing was written"
        )


def _check_call_step(session_id: str, step: int) -> None:
    if step < 0:
        raise StoreError(f"session {session_id!r}: a call's step index must be >= 0, got {step}")


def _check_call_at(session_id: str, step: int, steps: int) -> None:
    """A call record points at the step its reply produces: the session must hold exactly the
    ``step`` steps the call was sent (more means another writer appended after the prompt was
    built, fewer that the prompt held steps that were never stored)."""
    if step != steps:
        raise StoreConflictError(
            f"session {session_id!r}: a call sent {step} steps is recorded, but the session "
            f"holds {steps}; nothing was written"
        )


def _call_record(
    call_idx: int, step: int, messages: list[Message], usage: dict[str, Any], created_at: str
) -> dict[str, Any]:
    return {
        "call": call_idx,
        "step": step,
        "messages": messages,
        "usage": usage,
        "created_at": created_at,
    }


def _missing(session_id: str, where: str) -> StoreError:
    return StoreError(f"session {session_id!r} does not exist in {where}")


def _not_next(session_id: str, index: int, expected: int) -> StoreConflictError:
    return StoreConflictError(
        f"session {session_id!r}: step index {index} is not the next index {expected}; "
        "nothing was written"
    )
