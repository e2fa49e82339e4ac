"""The sessions a store holds, and the index that finds the one a conversation continues.

A conversation continues the stored session that is exactly its longest stored prefix and is
free; otherwise a branch starts with a copy of the shared steps, so a client that rewrites its
history gets a branch and nothing stored is ever altered (:class:`SessionIndex`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace

from contextfold.core.driver import Driver
from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage, Message
from contextfold.core.protocols import SessionRecord, SharedStore, Store, Strategy
from contextfold.core.tokens import TokenCounter
from contextfold.serve.ledger.arms import Arms
from contextfold.serve.sessions.buffered import BufferedStore
from contextfold.serve.sessions.conversation import Conversation, chain_hashes
from contextfold.serve.sessions.learning import IdleEnds
from contextfold.serve.sessions.markers import Markers, reply_key
from contextfold.serve.sessions.replicas import branch_meta
from contextfold.serve.sessions.turns import Branch

__all__ = ["SessionIndex"]


class SessionIndex:
    """The sessions of one store, indexed by the hash chain of their histories.

    Matching: the request's conversation is hashed as a chain
    (:mod:`~contextfold.serve.sessions.conversation`); the longest prefix of it that some stored
    session holds wins. A session whose whole history is that prefix, and that no other request is
    using, is continued; otherwise (the stored session went on differently, or it is busy) a new
    branch starts with a copy of the shared steps. So two conversations that open identically share
    at most their common prefix and part as soon as they differ; a client that rewrites its history
    gets a branch; nothing stored is ever altered.

    Replicas (several proxies on one :class:`~contextfold.core.protocols.SharedStore`): before
    each request the index polls the store's step counts (:meth:`sync`) and reopens the sessions
    other replicas created or extended, so requests of one conversation may alternate between
    replicas (the races: :class:`~contextfold.serve.sessions.sessions.SessionManager`).

    Everything here runs on the proxy's session thread (the store's connection is its own).
    """

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
        self.store = store
        self.budget = budget
        """Each session's view is fitted to it (None: no limit)."""
        self.ends = ends
        """With ``serve --learn``: idle sessions are recorded as ended (:mod:`.learning`)."""
        self.markers = markers or Markers()
        """The strategy's marker lines: cut from replies, hashed without (:mod:`.markers`)."""
        self.make_strategy = make_strategy
        self.arms = arms or Arms(make_strategy, make_strategy)
        """Each session's strategy is its arm's (``serve --control``: :mod:`..ledger.arms`)."""
        self.counter = counter
        self.sessions: dict[str, Branch] = {}
        self._index: dict[str, list[tuple[str, int]]] = {}
        self._reserved: set[str] = set()
        """Ids of sessions created by requests still in flight."""
        self._foreign: set[str] = set()
        """Ids of stored sessions the proxy did not make, or cannot read (never served)."""
        self.skipped: list[tuple[str, str]] = []
        """Stored sessions that could not be read (a corrupt row): id and problem."""

    # -- what the store holds

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

    def served_heads(self, conv: Conversation, start: int) -> dict[int, Message]:
        """The steps of ``conv`` from ``start`` on whose reply is one the proxy served, with
        the marker lines the client was not shown put back (and the parts of another API it
        could not send back: a Gemini upstream's thought signatures), by index.

        A reply served is kept in the store of the session it answered, by the number of
        steps it answered (:meth:`~contextfold.core.protocols.Store.record_reply`); the client
        sends it back as the step after those, so it is looked for only in the sessions that
        hold exactly that conversation (the chain's entry before the step), and matched by
        what the client was shown. A reply no such session served gets nothing put back; a
        restarted proxy, or another replica on the same store, finds the same. On the session
        thread (it reads the store)."""
        out: dict[int, Message] = {}
        for i in range(start, len(conv.steps)):
            head = conv.steps[i][0]
            if isinstance(head, AssistantMessage):
                kept = self._served(conv.chain[i], i, head)
                if kept is not None:
                    out[i] = kept
        return out

    def _served(self, answered: str, step: int, head: AssistantMessage) -> Message | None:
        key = reply_key(head)
        for sid, _ in self._index.get(answered, ()):
            for reply in self.store.load_replies(sid, step=step):
                cut = self.markers.cut(reply)
                lost = reply.parts if not head.parts else ()
                if (cut.lines or lost) and reply_key(cut.message) == key:
                    content = (head.content or "") + cut.lines
                    return replace(head, content=content, parts=head.parts or lost)
        return None

    def in_flight(self) -> int:
        """Requests holding a session now (busy sessions, and new ones not yet committed)."""
        return sum(s.busy for s in self.sessions.values()) + len(self._reserved)

    # -- matching and branching

    def _longest_prefix(self, conv: Conversation) -> tuple[int, list[Branch]]:
        for k in range(len(conv.chain) - 1, -1, -1):
            found = self._index.get(conv.chain[k])
            if found:
                return k, [self.sessions[sid] for sid, _ in found]
        return -1, []

    def _branch(self, conv: Conversation, family: str, k: int, parent: Branch | None) -> Branch:
        """A new session holding the first ``k`` steps of ``conv`` (a copy of ``parent``'s)."""
        forked = parent is not None and k > 0
        meta = branch_meta(family, parent.id if forked and parent else None, k)
        session_id = self._new_id(family)
        parent_meta = parent.history.meta if forked and parent else None
        meta["serve"].update(self.arms.label(session_id, family, parent_meta))
        self._reserved.add(session_id)
        buffer = BufferedStore(self.store)
        history = History(
            conv.system, counter=self.counter, store=buffer, session_id=session_id, meta=meta
        )
        driver = Driver(self.arms.factory(meta)(), history, budget=self.budget)
        return Branch(session_id, family, driver, buffer, [], 0)

    def _new_id(self, family: str) -> str:
        if not family:
            return f"px-{uuid.uuid4().hex[:16]}"
        taken = set(self.sessions) | self._reserved | set(self.store.list_sessions())
        n, candidate = 1, family
        while candidate in taken:
            n += 1
            candidate = f"{family}~{n}"
        return candidate

    def _reopen(self, session_id: str, family: str, record: SessionRecord | None = None) -> Branch:
        buffer = BufferedStore(self.store)
        if record is None:
            record = self.store.load_session(session_id)
        history = History.from_record(buffer, record, counter=self.counter)
        driver = Driver.resumed(self.arms.factory(record.meta)(), history, budget=self.budget)
        steps = [s.messages for s in history.steps]
        chain = chain_hashes(family, history.system, steps, self.markers.shown)
        session = Branch(session_id, family, driver, buffer, chain, len(history))
        session.folds = len(history.folds)
        self.sessions[session_id] = session
        if self.ends is not None:
            self.ends.seen(session_id)
        return session

    def _index_from(self, session: Branch, start: int) -> None:
        for k in range(start, session.committed + 1):
            self._index.setdefault(session.chain[k], []).append((session.id, k))
