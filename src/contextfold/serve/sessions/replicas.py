"""Proxy replicas on one shared store: a turn that lost a race becomes a branch of its own.

Two replicas may continue the same session at once and the database decides which wins; the
loser's turn is written whole as a new session (:func:`write_branch`), so nothing is lost and
no stored step is altered.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from contextfold.core.errors import StoreConflictError
from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage, Message
from contextfold.core.protocols import Store

__all__ = ["SentCall", "branch_meta", "shared_steps", "write_branch"]

_ATTEMPTS = 5


@dataclass(frozen=True, slots=True)
class SentCall:
    """One upstream call of a turn, as the call log keeps it."""

    step: int
    messages: list[Message]
    usage: dict[str, int]


def branch_meta(family: str, parent: str | None, fork_at: int) -> dict[str, Any]:
    """The ``serve`` metadata of a session: its family, and where it forked from (if it did)."""
    return {
        "serve": {
            "family": family,
            "parent": parent,
            "fork_at": fork_at if parent is not None else None,
        }
    }


def shared_steps(ours: Sequence[str], theirs: Sequence[str]) -> int:
    """How many leading steps two conversations share, from their hash chains (entry ``k``
    hashes the first ``k`` steps): a branch's fork point. More than the turn began from when
    some of its steps reached the session before it lost the race."""
    same = 0
    for k, (a, b) in enumerate(zip(ours, theirs, strict=False)):
        if a != b:
            break
        same = k
    return same


def write_branch(
    store: Store,
    history: History,
    meta: dict[str, Any],
    turn: tuple[list[SentCall], AssistantMessage | None],
    new_id: Callable[[], str],
) -> str:
    """Write ``history`` (steps, fold log) and the turn's calls and reply kept (if any) as a
    new session; its id.

    Two replicas that continue the same session at once both hold it "free" in their own
    memory; the database decides: every write of a turn checks the session's step count under
    its row lock (a new session's creation its id, a step its index, a call record that the
    session holds exactly the steps the call was sent), and the other replica gets a
    :class:`~contextfold.core.errors.StoreConflictError`. The loser's conversation is then
    written here whole as a new session (the shared prefix copied, its parent and fork point in
    ``meta``), with its calls, just as a busy session branches within one proxy, so nothing is
    lost, no call points at steps its prompt did not hold, and no stored step is altered. A
    turn that adds no step (a client's retry) has a call record as its first write, so it is
    caught the same way.

    The calls of a turn were all sent the whole history (their ``step`` is its length), so
    they are written after the steps. The id comes from ``new_id``; if another writer takes it
    first, a fresh one is drawn.
    """
    for attempt in range(_ATTEMPTS):
        session_id = new_id() if attempt == 0 else f"{new_id()}~{uuid.uuid4().hex[:8]}"
        try:
            store.create_session(
                session_id, system=history.system, counter=history.counter.name, meta=meta
            )
        except StoreConflictError:
            continue
        for step in history.steps:
            store.append_step(session_id, step)
        for record in history.folds:
            store.append_fold(session_id, record)
        sent, reply = turn
        for call in sent:
            store.record_call(session_id, step=call.step, messages=call.messages, usage=call.usage)
        if reply is not None:
            store.record_reply(session_id, step=len(history.steps), message=reply)
        return session_id
    raise StoreConflictError(f"no free session id for a branch after {_ATTEMPTS} attempts")
