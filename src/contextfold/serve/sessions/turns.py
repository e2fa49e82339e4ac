"""What the proxy holds of a session, and of the requests in flight on it.

A :class:`Branch` (one stored conversation branch: a session of the store), its
:class:`Growth` (the requests in flight sending the same conversation, which share one
extension instead of each storing its own copy) and each request's :class:`Turn`. One writer
per session: only the growth's leader appends and folds. A branch's step (append, fold,
render, the budget, the strategy's tools) is the loop step every entry point shares
(:class:`~contextfold.core.driver.Driver`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from contextfold.core.driver import Driver
from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage, common_prefix
from contextfold.core.protocols import SessionRecord, Strategy
from contextfold.core.tokens import TokenCounter
from contextfold.core.view import View
from contextfold.serve.sessions.buffered import BufferedStore
from contextfold.serve.sessions.replicas import SentCall

__all__ = ["MARKS_KEPT", "Branch", "Growth", "Turn", "answer_tool", "rebuild"]

MARKS_KEPT = 64
"""How many of a session's earlier cache marks :meth:`Branch.cached_through` remembers."""


@dataclass(slots=True)
class Growth:
    """The requests in flight on one session, sending the same conversation.

    The steps one request appended for them all (buffered until one succeeds) and the view they
    all send, so identical concurrent requests share one extension instead of each storing its
    own copy. One writer per session: only the request that claimed the session (the growth's
    leader) appends, observes, folds and renders, under the session's lock, on a worker thread;
    the members that joined it call the strategy's tools under the same lock.
    """

    end: str
    """The hash of the whole conversation they send (what an identical request matches)."""
    created: bool
    """Whether the session is new (nothing of it stored yet)."""
    members: int = 1
    ready: Future[Turn] = field(default_factory=Future)
    """The leader's turn once it has extended the session and rendered the view."""
    written: bool = False
    """Whether one member succeeded and wrote the growth's steps (to :attr:`home`)."""
    home: str = ""
    """The session its steps were written to (another, when a race moved them to a branch)."""
    open: bool = True
    """Whether identical requests may still join (not once every member has left)."""


@dataclass(slots=True)
class Branch:
    """One stored conversation branch (a session of the store) and the loop step on it: its
    :class:`~contextfold.core.driver.Driver` (the history, written through a
    :class:`~contextfold.serve.sessions.buffered.BufferedStore`, and the strategy rendering it), the
    hash chain of its steps, and how much of it is in the store; while requests use it, its
    :class:`Growth`."""

    id: str
    family: str
    driver: Driver
    buffer: BufferedStore
    chain: list[str]
    committed: int
    """Steps written to the store (the rest belong to the requests in flight, or were left
    unwritten by a failed one)."""
    folds: int = 0
    """Fold records written to the store."""
    growth: Growth | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    stale: bool = False
    """A commit failed midway: the store may hold more than :attr:`committed` (reload it)."""
    view: View | None = None
    """The latest view rendered (while a request is in flight: the view it sent)."""
    marked: list[int] = field(default_factory=list)
    """Where the latest views' caches were marked: their settled parts' and whole lengths, in
    messages (the latest :data:`MARKS_KEPT`, ascending)."""

    def cached_through(self, view: View) -> int | None:
        """How many leading messages of ``view`` an earlier call's cache holds: the longest
        prefix marked before that the latest view shares with it (None: none); then ``view``
        is the latest."""
        shared = common_prefix(self.view.messages if self.view else (), view.messages)
        through = max((p for p in self.marked if p <= shared), default=None)
        new = {len(view.messages), view.settled or 0} - {0}
        self.marked = sorted({*self.marked, *new})[-MARKS_KEPT:]
        self.view = view
        return through

    @property
    def history(self) -> History:
        return self.driver.history

    @property
    def strategy(self) -> Strategy:
        return self.driver.strategy

    @property
    def busy(self) -> bool:
        return self.growth is not None


@dataclass(slots=True)
class Turn:
    """One request's part of a growth, from the view it sends to commit or discard: the view,
    and the upstream calls it made."""

    session: Branch
    growth: Growth
    created: bool
    appended: int
    folds: int
    view: View
    received_tokens: int
    sent: list[SentCall] = field(default_factory=list)
    """The upstream calls of this turn (written at commit; again if moved to a branch)."""
    cached_through: int | None = None
    """How many leading messages of the view an earlier call cached
    (:meth:`Branch.cached_through`)."""
    reply: AssistantMessage | None = None
    """The reply the client gets, as the history will hold it when the client sends it back,
    when that differs from what the client sees (it had marker lines cut): kept at commit."""

    @property
    def calls(self) -> int:
        return len(self.sent)

    @property
    def own_tools(self) -> list[dict[str, Any]]:
        return self.session.driver.own_tools

    def joined(self) -> Turn:
        """The turn of a request that joined this one's growth: the same view, no steps of
        its own, calls of its own."""
        return Turn(
            self.session,
            self.growth,
            False,
            0,
            0,
            self.view,
            self.received_tokens,
            cached_through=self.cached_through,
        )


def rebuild(session: Branch, make_strategy: Callable[[], Strategy], counter: TokenCounter) -> None:
    """Put ``session`` back as it is stored, from what it holds in memory (its steps and fold
    records up to what was written, the chain of hashes of those steps): a new history and
    strategy that observed them again, no store read, nothing counted or hashed again."""
    history = session.history
    record = SessionRecord(
        session.id,
        history.system,
        history.counter.name,
        list(history.steps[: session.committed]),
        history.meta,
        list(history.folds[: session.folds]),
    )
    session.buffer.discard()
    rebuilt = History.from_record(session.buffer, record, counter=counter)
    session.driver = Driver.resumed(make_strategy(), rebuilt, budget=session.driver.budget)


def answer_tool(turn: Turn, name: str, arguments: str) -> str:
    """Answer a call of one of the strategy's own tools
    (:meth:`~contextfold.core.driver.Driver.answer`): its answer, or an error text the model
    reads (never a raise: the arguments come from the model and may be anything). Under the
    session's lock."""
    return turn.session.driver.answer(name, arguments)
