"""The proxy learning across sessions (``serve --learn``): a session idle long enough has ended.

A client never tells the proxy that a conversation is over, so the proxy calls a session ended
when no request has continued it for a while, and the sessions after it start from what it
showed (:class:`IdleEnds`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from contextfold.core.protocols import Learning

if TYPE_CHECKING:
    from contextfold.serve.sessions.turns import Branch

__all__ = ["IdleEnds"]


@dataclass(slots=True)
class IdleEnds:
    """When each session was last used, and which ones have been recorded as ended.

    A session no request has continued for ``idle`` seconds has ended: its strategy then
    records what the session showed (:meth:`~contextfold.core.protocols.Learning.end`: its
    calls, reach-backs, folds) in the experience every session's strategy shares, and the
    sessions after it start from that. A session is recorded once, the first time it goes
    idle; if a client continues it afterwards, the calls it makes then are not recorded
    (counting the session again would count its first calls twice). Idle sessions are looked
    for when a request arrives (:meth:`sweep`), on the session thread, before the request is
    matched: a proxy with no traffic learns nothing, and needs to learn nothing, until the next
    session starts. With ``serve --save-experience``, the experience is written to its file
    after each sweep that recorded a session (:attr:`on_end`), so what the proxy learned
    outlives it (start the next proxy from it with ``--experience``).
    """

    idle: float
    """Seconds without a request after which a session has ended."""
    clock: Callable[[], float] = time.monotonic
    ended: set[str] = field(default_factory=set)
    """Sessions recorded as ended (never recorded again)."""
    on_end: Callable[[], None] | None = None
    """Called after a sweep that recorded a session (``serve --save-experience``: write the
    experience)."""
    _used: dict[str, float] = field(default_factory=dict)
    """Session -> when last used, least recently used first (the sweep stops at the first
    one not idle long enough, so a request does not look at every session)."""

    def used(self, session_id: str) -> None:
        """A request continued (or created) the session now."""
        self._used.pop(session_id, None)
        self._used[session_id] = self.clock()

    def seen(self, session_id: str) -> None:
        """The session was loaded or reopened: idle from now on, unless used before."""
        self._used.setdefault(session_id, self.clock())

    def sweep(self, sessions: Mapping[str, Branch]) -> None:
        """Record the sessions idle for ``idle`` seconds as ended (a busy one is used again
        when its request ends)."""
        now, recorded = self.clock(), False
        while self._used:
            session_id, last = next(iter(self._used.items()))
            if now - last < self.idle:
                break
            del self._used[session_id]
            session = sessions.get(session_id)
            if session is None or session.busy or session_id in self.ended:
                continue
            self.ended.add(session_id)
            if isinstance(session.strategy, Learning):
                session.driver.end()
                recorded = True
        if recorded and self.on_end is not None:
            self.on_end()
