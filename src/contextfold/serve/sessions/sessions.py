"""Sessions of the proxy: which stored history a request continues, and its two-phase append.

A request's steps, folds and calls are buffered and written only once it has succeeded, so a
failed request leaves nothing stored and its retry does not fold again; a session's strategy
work runs under its own lock, so a slow fold holds up only that session (:class:`SessionManager`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from contextfold.core.driver import Driver
from contextfold.core.errors import ContextBudgetError, StoreConflictError
from contextfold.core.messages import Message
from contextfold.core.pipeline import Rendered
from contextfold.core.protocols import (
    SharedStore,
    Store,
    Strategy,
)
from contextfold.core.tokens import TokenCounter
from contextfold.serve.errors import ApiError
from contextfold.serve.ledger.arms import Arms, arm_of, unit_of
from contextfold.serve.sessions.conversation import Conversation
from contextfold.serve.sessions.index import SessionIndex
from contextfold.serve.sessions.learning import IdleEnds
from contextfold.serve.sessions.markers import Markers
from contextfold.serve.sessions.replicas import SentCall, branch_meta, shared_steps, write_branch
from contextfold.serve.sessions.turns import Branch, Growth, Turn, rebuild

__all__ = ["Branch", "Claim", "SessionManager", "Turn"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Claim:
    """A request's hold on a session: as its growth's leader (it extends the session) or as
    a member that joined an identical request in flight."""

    session: Branch
    growth: Growth
    leader: bool
    conversation: Conversation
    matched: int
    """Steps of the conversation the session held when claimed (-1: none matched)."""
    put_back: bool = False
    """Whether the session holds unwritten steps of a failed request that the conversation
    does not: it is put back as stored before it is extended."""
    heads: dict[int, Message] = field(default_factory=dict)
    """New steps' replies the proxy served, by index, with the marker lines the client was
    not shown (:meth:`~.index.SessionIndex.served_heads`)."""


class SessionManager(SessionIndex):
    """The sessions of one store and the requests in flight on them.

    Threads (see :mod:`contextfold.serve.sessions.worker`): the index, the claims and every store
    call run on the proxy's one session thread, in arrival order, each quick, so each SQLite
    connection stays on the thread that opened it. A session's strategy work (append and observe,
    fold, render, its tools: the loop step, :class:`~contextfold.core.driver.Driver`) runs on a
    worker thread under the session's own lock (:meth:`extend`), so a slow fold holds up only its
    own session's request, never another session's.

    Two phases: :meth:`claim` and :meth:`extend` append the new steps through a
    :class:`~contextfold.serve.sessions.buffered.BufferedStore`; :meth:`commit` writes them when a
    request has succeeded (the first of a growth's members; each member's calls at its own
    commit). When every member failed, nothing is written and nothing is undone yet: the
    session keeps its unwritten steps (and folds) in memory and in its buffer, the way the
    failed request left them. The next request, nearly always the client's retry, continues
    from there when its conversation holds those steps, so a failed request costs no more than
    a good one and a retry does not fold again; a request that does not hold them first
    puts
    the session back as stored, from memory (:func:`~contextfold.serve.sessions.turns.rebuild`: no
    store
    read).

    Replicas (several proxies on one :class:`~contextfold.core.protocols.SharedStore`): before each
    request the manager polls the store's step counts and reopens the sessions other replicas
    created or extended, so requests of one conversation may alternate between replicas. Two
    replicas that use the same session at once race in the database: each write of a turn checks the
    session's step count (a step its index, a call record the steps its prompt held), and the
    loser's turn is written instead as a new branch (see
    :mod:`~contextfold.serve.sessions.replicas`), as a busy session branches within one proxy. So a
    turn that adds no step (a client's retry) and whose session another replica extended meanwhile
    keeps its call in a branch holding exactly the steps the call was sent, never in the moved-on
    session under a stale index."""

    def __init__(
        self,
        store: Store,
        make_strategy: Callable[[], Strategy],
        counter: TokenCounter,
        *,
        budget: int | None = None,
        ends: IdleEnds | None = None,
        markers: Markers | None = None,
        arms: Arms | None = None,
    ) -> None:
        super().__init__(
            store, make_strategy, counter, budget=budget, ends=ends, markers=markers, arms=arms
        )
        self._growing: dict[str, Branch] = {}
        """Sessions with requests in flight, by the hash of the conversation they send."""

    # -- one request, in one thread (tests, embedding); the proxy runs the parts apart

    def begin(self, conv: Conversation, family: str) -> Turn:
        """Claim, extend and render in one go (the proxy does these on separate threads)."""
        claim = self.claim(conv, family)
        try:
            if not claim.leader:
                return claim.growth.ready.result().joined()
            with claim.session.lock:
                return self.extend(claim)
        except BaseException:
            self.leave(claim.session, claim.growth)
            raise

    def discard(self, turn: Turn) -> None:
        """The request failed: nothing of it is written (see :meth:`leave`)."""
        self.leave(turn.session, turn.growth)

    # -- the parts of a request

    def claim(self, conv: Conversation, family: str) -> Claim:
        """The session ``conv`` continues (found, branched, or joined: an identical request
        is in flight), marked busy. On the session thread; nothing of the strategy runs.

        Matching (:class:`~contextfold.serve.sessions.index.SessionIndex`): the stored session a
        conversation continues, or a new branch. A request identical to one in flight (the same
        whole conversation: a client's retry) joins it
        (:class:`~contextfold.serve.sessions.turns.Growth`):
        it sends the same view and keeps its own calls, and the conversation is stored once.
        """
        self.sync()
        if self.ends is not None:
            self.ends.sweep(self.sessions)
        joined = self._growing.get(conv.chain[-1])
        if joined is not None and joined.growth is not None and joined.growth.open:
            joined.growth.members += 1
            return Claim(joined, joined.growth, False, conv, len(conv.steps))
        k, candidates = self._longest_prefix(conv)
        tip = next((s for s in candidates if s.committed == k and not s.busy), None)
        session = tip or self._branch(conv, family, k, candidates[0] if candidates else None)
        session.growth = growth = Growth(conv.chain[-1], created=tip is None)
        put_back = not _holds_unwritten(session, conv)
        heads = self.served_heads(conv, max(k, 0))
        session.chain = list(conv.chain)
        self._growing[growth.end] = session
        return Claim(session, growth, True, conv, k, put_back, heads)

    def extend(self, claim: Claim) -> Turn:
        """Append the claim's new steps (buffered), observe, fold and render: the leader's
        turn, which the members that join get too. On a worker, under the session's lock."""
        session, growth = claim.session, claim.growth
        try:
            if claim.put_back:
                self._put_back(session)
            turn = self._extend(session, growth, claim)
        except BaseException as exc:
            growth.ready.set_exception(exc)
            raise
        growth.ready.set_result(turn)
        return turn

    def _extend(self, session: Branch, growth: Growth, claim: Claim) -> Turn:
        conv, k, driver = claim.conversation, claim.matched, session.driver
        for i in range(len(driver.history), len(conv.steps)):
            messages = conv.steps[i]
            head = claim.heads.get(i, messages[0])  # with the lines the client was not shown
            driver.append(head, *messages[1:])
        rendered = _prepare(driver)
        view = rendered.view
        cached = session.cached_through(view)
        history = driver.history
        received = history.system_tokens + sum(s.total_tokens for s in history.steps)
        appended = len(history) - (0 if growth.created else k)
        folds = len(rendered.folds)
        turn = Turn(session, growth, growth.created, appended, folds, view, received)
        turn.cached_through = cached
        return turn

    def record_call(self, turn: Turn, messages: list[Message], usage: dict[str, int]) -> None:
        """Keep one upstream call of the turn, to write at its commit."""
        step = len(turn.session.history)  # the call was sent every step of the growth
        turn.sent.append(SentCall(step=step, messages=messages, usage=usage))

    def commit(self, turn: Turn) -> None:
        """A request succeeded: write its growth's steps and folds (unless another member
        did), then its own calls; index the new prefixes. On the session thread. A failure
        leaves the turn to :meth:`discard`."""
        session, growth = turn.session, turn.growth
        try:
            if not growth.written:
                self._write_growth(turn)
            for call in turn.sent:
                self.store.record_call(
                    growth.home, step=call.step, messages=call.messages, usage=call.usage
                )
            if turn.reply is not None:
                step = len(session.history)
                self.store.record_reply(growth.home, step=step, message=turn.reply)
        except StoreConflictError:
            if not isinstance(self.store, SharedStore):
                raise
            self._move_to_branch(turn)
        if self.ends is not None:
            self.ends.used(growth.home)
        self._leave_member(session, growth)

    def _write_growth(self, turn: Turn) -> None:
        session, growth = turn.session, turn.growth
        try:
            session.buffer.commit()
        except BaseException:
            session.stale = True  # some writes may have landed: reread it when released
            raise
        growth.written, growth.home = True, session.id
        self._reserved.discard(session.id)
        start = 0 if growth.created else session.committed + 1
        session.committed, session.folds = len(session.history), len(session.history.folds)
        self.sessions[session.id] = session
        self._index_from(session, start)

    def _move_to_branch(self, turn: Turn) -> None:
        """Another replica claimed the session (or the new session's id) first, or extended
        the session before this turn's call records were written: write the turn as a new
        branch holding the whole conversation and its calls, and reopen both from the store.
        Steps of the turn already written to the session stay there (each at its right index)."""
        session, growth = turn.session, turn.growth
        self._reserved.discard(session.id)
        parent = None if growth.created else self._reopen(session.id, session.family)
        own = session.history.meta
        meta = (  # a new session keeps its own meta (it may be a branch already)
            dict(own)
            if parent is None
            else branch_meta(session.family, parent.id, shared_steps(session.chain, parent.chain))
        )
        served = {"arm": arm_of(own), "unit": unit_of(own, session.id)}  # as it was served
        meta["serve"] = {**meta["serve"], **served}
        writes, name = (turn.sent, turn.reply), lambda: self._new_id(session.family)
        new_id = write_branch(self.store, session.history, meta, writes, name)
        if not growth.written:  # the members still in flight write their calls there
            growth.written, growth.home = True, new_id
        self._index_from(self._reopen(new_id, session.family), 0)
        if parent is not None:
            self._index_from(parent, session.committed + 1)

    def leave(self, session: Branch, growth: Growth) -> None:
        """A member of ``growth`` failed, or its client hung up; the last one to leave
        releases the session, keeping what the growth appended unwritten (the two phases:
        :class:`SessionManager`). On the session thread, after the growth's leader has extended
        (or failed to)."""
        self._leave_member(session, growth)

    def _put_back(self, session: Branch) -> None:
        """The session as stored, from memory: steps a failed request left unwritten are
        dropped (the request about to extend it does not hold them). Under its lock."""
        try:
            rebuild(session, self.arms.factory(session.history.meta), self.counter)
        except BaseException:  # the strategy failed on its own steps: read it back instead
            session.stale = True
            raise

    def release(self, session: Branch) -> None:
        """Free a session no request holds any more. On the session thread."""
        growth, session.growth = session.growth, None
        if growth is not None:
            self._drop_growing(session, growth)
            if not growth.written:
                self._reserved.discard(session.id)
        if self.sessions.get(session.id) is session and session.stale:  # reread it
            self._index_from(self._reopen(session.id, session.family), session.committed + 1)

    def _leave_member(self, session: Branch, growth: Growth) -> None:
        growth.members -= 1
        if growth.members == 0:
            growth.open = False
            self.release(session)

    def _drop_growing(self, session: Branch, growth: Growth) -> None:
        if self._growing.get(growth.end) is session:
            del self._growing[growth.end]


def _prepare(driver: Driver) -> Rendered:
    """The view, the due folds run first and the view fitted to the budget
    (:meth:`~contextfold.core.driver.Driver.prepare`): a view that cannot fit is a 400 the
    client can act on."""
    try:
        return driver.prepare()
    except ContextBudgetError as exc:
        raise ApiError(400, str(exc), param="messages", code="context_length_exceeded") from exc


def _holds_unwritten(session: Branch, conv: Conversation) -> bool:
    """Whether ``conv`` holds every step ``session`` has (written or not): compared by the
    hash of the whole history, which ``session.chain`` still holds for unwritten steps."""
    held = len(session.history)
    if held == session.committed:
        return True
    return held < len(conv.chain) and conv.chain[held] == session.chain[held]
