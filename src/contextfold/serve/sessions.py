"""Sessions of the proxy: which stored history a request continues, and its two-phase append.

Every method runs on the proxy's one session thread (see :mod:`contextfold.serve.worker`), so
the index needs no lock and each SQLite connection stays on the thread that opened it.

Matching: the request's conversation is hashed as a chain (:mod:`~contextfold.serve.conversation`);
the longest prefix of it that some stored session holds wins. A session whose whole history is
that prefix, and that no other request is using, is continued; otherwise (the stored session
went on differently, or it is busy) a new branch starts with a copy of the shared steps. So two
conversations that open identically share at most their common prefix and part as soon as they
differ; a client that rewrites its history gets a branch; nothing stored is ever altered.

Two phases: :meth:`SessionManager.begin` appends the new steps through a
:class:`~contextfold.serve.buffered.BufferedStore`; :meth:`SessionManager.commit` writes them
when the request has succeeded, :meth:`SessionManager.discard` forgets them (and rebuilds the
session from the store) when it failed.

Replicas (several proxies on one :class:`~contextfold.core.protocols.SharedStore`): before each
request the manager polls the store's step counts and reopens the sessions other replicas
created or extended, so requests of one conversation may alternate between replicas. Two
replicas that use the same session at once race in the database: each write of a turn checks
the session's step count (a step its index, a call record the steps its prompt held), and the
loser's turn is written instead as a new branch (see :mod:`~contextfold.serve.replicas`), as a
busy session branches within one proxy. So a turn that adds no step (a client's retry) and
whose session another replica extended meanwhile keeps its call in a branch holding exactly
the steps the call was sent, never in the moved-on session under a stale index.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from contextfold.core.errors import StoreConflictError
from contextfold.core.history import History
from contextfold.core.messages import Message
from contextfold.core.protocols import (
    Compacting,
    Folding,
    SessionRecord,
    SharedStore,
    Store,
    Strategy,
    ToolProvider,
)
from contextfold.core.tokens import TokenCounter
from contextfold.core.view import View, render_checked
from contextfold.serve.buffered import BufferedStore
from contextfold.serve.conversation import Conversation, chain_hashes
from contextfold.serve.learning import IdleEnds
from contextfold.serve.replicas import SentCall, branch_meta, shared_steps, write_branch

__all__ = ["Session", "SessionManager", "Turn", "tool_arguments"]

_log = logging.getLogger(__name__)
_MAX_ARGUMENTS = 64 * 1024
"""Characters of a strategy tool call's arguments read at most."""


def tool_arguments(name: str, arguments: str) -> dict[str, Any] | str:
    """The arguments of a call as an object, or the error text to answer it with."""
    if len(arguments) > _MAX_ARGUMENTS:
        return f"error: the arguments of {name} are over {_MAX_ARGUMENTS:,} characters"
    try:
        parsed = json.loads(arguments or "{}", parse_constant=_no_constant)
    except RecursionError:
        return f"error: the arguments of {name} are nested too deeply"
    except ValueError as exc:  # not JSON, a constant, an integer past int()'s digits
        return f"error: the arguments of {name} are not valid JSON ({exc})"
    if not isinstance(parsed, dict):
        return f"error: the arguments of {name} must be a JSON object"
    return parsed


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


@dataclass(slots=True)
class Session:
    """One stored conversation branch and the strategy rendering it."""

    id: str
    family: str
    history: History
    strategy: Strategy
    buffer: BufferedStore
    chain: list[str]
    committed: int
    """Steps written to the store (the rest belong to the request in flight)."""
    busy: bool = False


@dataclass(slots=True)
class Turn:
    """One request's claim on a session, from :meth:`SessionManager.begin` to commit/discard."""

    session: Session
    created: bool
    appended: int
    folds: int
    view: View
    received_tokens: int
    sent: list[SentCall] = field(default_factory=list)
    """The upstream calls of this turn (written again if the turn is moved to a branch)."""

    @property
    def calls(self) -> int:
        return len(self.sent)

    @property
    def own_tools(self) -> list[dict[str, Any]]:
        strategy = self.session.strategy
        return strategy.tools() if isinstance(strategy, ToolProvider) else []


class SessionManager:
    """The sessions of one store, indexed by the hash chain of their histories."""

    def __init__(
        self,
        store: Store,
        make_strategy: Callable[[], Strategy],
        counter: TokenCounter,
        *,
        budget: int | None = None,
        ends: IdleEnds | None = None,
    ) -> None:
        self.store = store
        self.ends = ends
        """With ``serve --learn``: idle sessions are recorded as ended (:mod:`.learning`)."""
        self.make_strategy = make_strategy
        self.counter = counter
        self.budget = budget
        self.sessions: dict[str, Session] = {}
        self._index: dict[str, list[tuple[str, int]]] = {}
        self._reserved: set[str] = set()
        """Ids of sessions created by requests still in flight."""
        self._foreign: set[str] = set()
        """Ids of stored sessions the proxy did not make, or cannot read (never served)."""
        self.skipped: list[tuple[str, str]] = []
        """Stored sessions that could not be read (a corrupt row): id and problem."""

    def load(self) -> int:
        """Index the sessions the store already holds (those the proxy made); returns how many.
        A session that cannot be read is skipped (in :attr:`skipped`), not served."""
        for session_id in self.store.list_sessions():
            self._adopt(session_id)
        return len(self.sessions)

    def sync(self) -> int:
        """See what other replicas wrote to a shared store: reopen the sessions they created
        or extended (not those busy here); returns how many. Nothing to do on other stores."""
        if not isinstance(self.store, SharedStore):
            return 0
        changed = 0
        for sid, steps in self.store.step_counts().items():
            known = self.sessions.get(sid)
            if sid in self._foreign or sid in self._reserved:
                continue
            if known is None:
                changed += self._adopt(sid)
            elif known.committed != steps and not known.busy:
                self._index_from(self._reopen(sid, known.family), known.committed + 1)
                changed += 1
        return changed

    def _adopt(self, session_id: str) -> int:
        try:
            record = self.store.load_session(session_id)  # read once: its metadata and steps
            meta = record.meta.get("serve")
            if not isinstance(meta, dict):
                self._foreign.add(session_id)
                return 0
            session = self._reopen(session_id, str(meta.get("family", "")), record)
        except Exception as exc:  # one unreadable session must not stop the others
            self.sessions.pop(session_id, None)
            self._foreign.add(session_id)
            self.skipped.append((session_id, f"{type(exc).__name__}: {exc}"))
            return 0
        self._index_from(session, 0)
        return 1

    def in_flight(self) -> int:
        """Requests holding a session now (busy sessions, and new ones not yet committed)."""
        return sum(s.busy for s in self.sessions.values()) + len(self._reserved)

    def begin(self, conv: Conversation, family: str) -> Turn:
        """Find or branch the session ``conv`` continues; append its new steps (buffered),
        fold and render the view to send."""
        self.sync()
        if self.ends is not None:
            self.ends.sweep(self.sessions)
        k, candidates = self._longest_prefix(conv)
        tip = next((s for s in candidates if s.committed == k and not s.busy), None)
        session = tip or self._branch(conv, family, k, candidates[0] if candidates else None)
        session.busy = True
        created = tip is None
        try:
            return self._extend(session, conv, created, k)
        except BaseException:
            self._release(session, created=created)
            raise

    def _extend(self, session: Session, conv: Conversation, created: bool, k: int) -> Turn:
        for messages in conv.steps[len(session.history) :]:
            step = session.history.append(*messages)
            session.strategy.observe(step, session.history)
        session.chain = list(conv.chain)
        folds = self._fold(session)
        view = self._render(session)
        history = session.history
        received = history.system_tokens + sum(s.total_tokens for s in history.steps)
        return Turn(session, created, len(history) - (0 if created else k), folds, view, received)

    def call_tool(self, turn: Turn, name: str, arguments: str) -> str:
        """Answer a call of one of the strategy's own tools: its answer, or an error text the
        model reads (never a raise: the arguments come from the model and may be anything)."""
        strategy = turn.session.strategy
        if not isinstance(strategy, ToolProvider):
            return f"error: the strategy offers no tool {name!r}"
        parsed = tool_arguments(name, arguments)
        if isinstance(parsed, str):
            return parsed
        try:
            return strategy.call_tool(name, parsed, turn.session.history)
        except Exception as exc:  # the strategy broke its contract on hostile arguments
            _log.warning("contextfold serve: %s(%s) failed: %r", name, arguments[:80], exc)
            return f"error: {name} could not use these arguments ({type(exc).__name__})"

    def record_call(self, turn: Turn, messages: list[Message], usage: dict[str, int]) -> None:
        """Keep one upstream call of the turn in the session's call log (buffered)."""
        session = turn.session
        call = SentCall(step=len(session.history), messages=messages, usage=usage)
        session.buffer.record_call(session.id, step=call.step, messages=messages, usage=usage)
        turn.sent.append(call)

    def commit(self, turn: Turn) -> None:
        """The request succeeded: write its steps, folds and calls; index the new prefixes."""
        session = turn.session
        try:
            session.buffer.commit()
        except StoreConflictError:
            if not isinstance(self.store, SharedStore):
                raise
            self._move_to_branch(turn)
            return
        self._reserved.discard(session.id)
        start = 0 if turn.created else session.committed + 1
        session.committed = len(session.history)
        self.sessions[session.id] = session
        if self.ends is not None:
            self.ends.used(session.id)
        self._index_from(session, start)
        session.busy = False

    def _move_to_branch(self, turn: Turn) -> None:
        """Another replica claimed the session (or the new session's id) first, or extended
        the session before this turn's call records were written: write the turn as a new
        branch holding the whole conversation and its calls, and reopen both from the store.
        Steps of the turn already written to the session stay there (each at its right index)."""
        session = turn.session
        self._reserved.discard(session.id)
        parent = None if turn.created else self._reopen(session.id, session.family)
        meta = (  # a new session keeps its own meta (it may be a branch already)
            dict(session.history.meta)
            if parent is None
            else branch_meta(session.family, parent.id, shared_steps(session.chain, parent.chain))
        )
        new_id = write_branch(
            self.store, session.history, meta, turn.sent, lambda: self._new_id(session.family)
        )
        self._index_from(self._reopen(new_id, session.family), 0)
        if parent is not None:
            self._index_from(parent, session.committed + 1)

    def discard(self, turn: Turn) -> None:
        """The request failed: forget its writes and rebuild the session as stored."""
        self._release(turn.session, created=turn.created)

    def _release(self, session: Session, *, created: bool) -> None:
        session.buffer.discard()
        session.busy = False
        self._reserved.discard(session.id)
        if not created:
            self.sessions[session.id] = self._reopen(session.id, session.family)

    # -- matching and branching

    def _longest_prefix(self, conv: Conversation) -> tuple[int, list[Session]]:
        for k in range(len(conv.chain) - 1, -1, -1):
            found = self._index.get(conv.chain[k])
            if found:
                return k, [self.sessions[sid] for sid, _ in found]
        return -1, []

    def _branch(self, conv: Conversation, family: str, k: int, parent: Session | None) -> Session:
        """A new session holding the first ``k`` steps of ``conv`` (a copy of ``parent``'s)."""
        forked = parent is not None and k > 0
        meta = branch_meta(family, parent.id if forked and parent else None, k)
        session_id = self._new_id(family)
        self._reserved.add(session_id)
        buffer = BufferedStore(self.store)
        history = History(
            conv.system, counter=self.counter, store=buffer, session_id=session_id, meta=meta
        )
        return Session(session_id, family, history, self.make_strategy(), buffer, [], 0)

    def _new_id(self, family: str) -> str:
        if not family:
            return f"px-{uuid.uuid4().hex[:16]}"
        taken = set(self.sessions) | self._reserved | set(self.store.list_sessions())
        n, candidate = 1, family
        while candidate in taken:
            n += 1
            candidate = f"{family}~{n}"
        return candidate

    def _reopen(self, session_id: str, family: str, record: SessionRecord | None = None) -> Session:
        buffer = BufferedStore(self.store)
        if record is None:
            record = self.store.load_session(session_id)
        history = History.from_record(buffer, record, counter=self.counter)
        strategy = self.make_strategy()
        for step in history.steps:
            strategy.observe(step, history)
        steps = [s.messages for s in history.steps]
        chain = chain_hashes(family, history.system, steps)
        session = Session(session_id, family, history, strategy, buffer, chain, len(history))
        self.sessions[session_id] = session
        if self.ends is not None:
            self.ends.seen(session_id)
        return session

    def _index_from(self, session: Session, start: int) -> None:
        for k in range(start, session.committed + 1):
            self._index.setdefault(session.chain[k], []).append((session.id, k))

    # -- the view

    def _fold(self, session: Session) -> int:
        if not isinstance(session.strategy, Folding):
            return 0
        return len(session.strategy.fold(session.history, self.budget))

    def _render(self, session: Session) -> View:
        strategy, history, budget = session.strategy, session.history, self.budget
        view = render_checked(strategy, history, budget)
        over = budget is not None and view.total_tokens > budget
        if over and isinstance(strategy, Compacting) and strategy.compact(history, budget or 0):
            self._fold(session)
            view = render_checked(strategy, history, budget)
        return view
