"""One request's session work, each part on its thread (see
:mod:`contextfold.serve.sessions.worker`).

The claim runs on the session thread; the leader's extension (append, observe, fold, render)
on a worker under the session's lock, and a member that joined an identical request waits
for that one's view instead; a commit, or after a failure the release, on the session thread.
The parts are chained by callbacks, not by the request's task, so a client that hangs up at
any point (its task cancelled) still leaves the session released, with nothing written.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from contextfold.core.messages import ToolCall
from contextfold.serve.sessions.conversation import Conversation
from contextfold.serve.sessions.sessions import Claim, SessionManager
from contextfold.serve.sessions.turns import Branch, Growth, Turn, answer_tool
from contextfold.serve.sessions.worker import SessionThread, SessionWorkers

__all__ = ["Dispatch"]

_log = logging.getLogger(__name__)


class Dispatch:
    """Runs :class:`SessionManager` work on the proxy's session thread and workers."""

    def __init__(
        self,
        thread: SessionThread,
        workers: SessionWorkers,
        manager: Callable[[], SessionManager],
    ) -> None:
        self.thread = thread
        self.workers = workers
        self._manager = manager

    async def begin(self, conv: Conversation, family: str) -> Turn:
        """The request's turn: its session claimed, extended and rendered."""
        started = self._start(conv, family)
        try:
            return await asyncio.shield(asyncio.wrap_future(started))
        except asyncio.CancelledError:  # the client left: the turn is let go once it exists
            started.add_done_callback(self._let_go)
            raise

    async def commit(self, turn: Turn) -> None:
        manager = self._manager()
        await self.thread.run(lambda: manager.commit(turn))

    def discard(self, turn: Turn) -> None:
        """Let a failed turn go (nothing awaited: safe from a cancelled task)."""
        self._abandon(turn.session, turn.growth)

    async def call_tools(self, turn: Turn, calls: list[ToolCall]) -> dict[str, str]:
        """The answers of the strategy's tools to ``calls`` (by call id), under the lock."""

        def answer() -> dict[str, str]:
            return {c.id: answer_tool(turn, c.name, c.arguments) for c in calls}

        return await self.workers.run(turn.session, answer)

    def _start(self, conv: Conversation, family: str) -> Future[Turn]:
        manager, out = self._manager(), Future[Turn]()

        def claimed(done: Future[Claim]) -> None:
            try:
                claim = done.result()
            except BaseException as exc:
                out.set_exception(exc)
                return
            if claim.leader:
                extended = self.workers.submit(claim.session, lambda: manager.extend(claim))
                extended.add_done_callback(lambda f: self._settle(claim, f, out))
            else:
                claim.growth.ready.add_done_callback(lambda f: self._settle(claim, f, out))

        self.thread.post(lambda: manager.claim(conv, family)).add_done_callback(claimed)
        return out

    def _settle(self, claim: Claim, done: Future[Turn], out: Future[Turn]) -> None:
        try:
            turn = done.result()
        except BaseException as exc:
            self._abandon(claim.session, claim.growth)
            out.set_exception(exc)
            return
        out.set_result(turn if claim.leader else turn.joined())

    def _let_go(self, started: Future[Turn]) -> None:
        if started.exception() is None:
            self.discard(started.result())

    def _abandon(self, session: Branch, growth: Growth) -> None:
        manager = self._manager()
        self.thread.post(lambda: manager.leave(session, growth)).add_done_callback(_logged)


def _logged(done: Future[Any]) -> None:
    if done.exception() is not None:
        _log.error("contextfold serve: a session could not be let go", exc_info=done.exception())
