"""contextfold's own store: the ``sessions.db`` ``contextfold serve``, ``wrap`` and ``run`` write
(SQLite), or a PostgreSQL database given as a ``postgresql://`` URL in place of a path.

Every stored session is a trajectory, read through the store's own API
(:mod:`contextfold.core.store`): its system prompt and steps as the history holds them. Where the
store keeps serve's ledger, each assistant step carries the usage the upstream billed for the
call that produced it (the strategy's view, as it was sent: ``meta["arm"]`` says whether that
was the session's strategy or, in the control group, the whole conversation).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from contextfold.core.errors import ContextFoldError, ImportFormatError
from contextfold.core.ledger import LedgerEntry
from contextfold.core.protocols import LedgerStore, SessionRecord
from contextfold.core.store import APPLICATION_ID, display_store, open_store
from contextfold.importers.base import RecordedCall, Trajectory
from contextfold.importers.probe import Format, Item, Probe
from contextfold.importers.records import iso_time, main_model

__all__ = ["FORMAT", "SQLITE_MAGIC", "read_store"]

SQLITE_MAGIC = b"SQLite format 3\x00"
"""The first bytes of every SQLite database."""


def read_store(target: str) -> Iterator[Item]:
    """Every session of the store at ``target`` (a path, or a PostgreSQL URL), and an error
    for the store, or for each session, that cannot be read."""
    name = display_store(target)
    try:
        store = open_store(target)
    except ContextFoldError as exc:
        yield ImportFormatError(name, "store", str(exc))
        return
    with store:
        ledger = _ledger(store)
        for session in store.list_sessions():
            try:
                record = store.load_session(session)
            except ContextFoldError as exc:
                yield ImportFormatError(name, f"session {session}", str(exc))
                continue
            yield _trajectory(name, record, ledger)


def _ledger(store: object) -> dict[tuple[str, int], LedgerEntry]:
    """The client's own calls serve billed, by session and the steps they were sent."""
    if not isinstance(store, LedgerStore):
        return {}
    entries = store.load_ledger()
    return {(e.session_id, e.step): e for e in entries if e.round_idx == 0 and not e.error}


def _trajectory(
    name: str, record: SessionRecord, ledger: dict[tuple[str, int], LedgerEntry]
) -> Trajectory:
    steps = tuple(tuple(step.messages) for step in record.steps)
    billed = [
        ledger.get((record.session_id, s.index)) for s in record.steps if s.kind == "assistant"
    ]
    calls: tuple[RecordedCall, ...] = ()
    if any(billed):
        calls = tuple(
            RecordedCall(e.billed, iso_time(e.created_at), e.model)
            if e
            else RecordedCall(None, None, None)
            for e in billed
        )
    meta: dict[str, Any] = {"format": "store", "store": name, "counter": record.counter}
    meta.update(session_meta=dict(record.meta), folds=len(record.folds))
    arms = {e.arm for e in billed if e}
    if arms:
        meta["arm"] = arms.pop() if len(arms) == 1 else "mixed"
    return Trajectory(
        record.session_id, name, record.system, steps, meta=meta,
        model=main_model(calls), calls=calls, bills_conversation=meta.get("arm") == "control",
    )  # fmt: skip


def _claims(probe: Probe) -> bool:
    """A SQLite database with contextfold's ``application_id`` (its header says it)."""
    head = probe.head
    return head.startswith(SQLITE_MAGIC) and head[68:72] == APPLICATION_ID.to_bytes(4, "big")


FORMAT = Format(
    name="store",
    summary="contextfold's own sessions.db (serve, wrap, run) or postgresql:// URL",
    suffixes=(".db",),
    claims=_claims,
    read=lambda probe: read_store(str(probe.path)),
)
