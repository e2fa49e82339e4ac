"""The proxy's threads: one session thread for the store and the index, workers for sessions.

SQLite connections belong to the thread that opened them, and the index of sessions is shared
by every request: one :class:`SessionThread` owns both and runs their work in arrival order
(claims, commits, store reads and writes: each quick). A session's strategy work (append and
observe, fold, render, its tools) runs on :class:`SessionWorkers` under that session's own
lock, so a strategy that folds with a model holds up its own session's request only, while
other sessions' requests are served beside it. Upstream calls run on the event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from contextfold.serve.sessions.turns import Branch

__all__ = ["SessionThread", "SessionWorkers"]

T = TypeVar("T")

DEFAULT_WORKERS = 16
"""Sessions whose strategy work can run at once (each fold in progress holds one)."""


class SessionThread:
    """One worker thread; :meth:`run` awaits a function on it, :meth:`post` fires and forgets."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="contextfold-sessions")

    async def run(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the session thread and await its result."""
        return await asyncio.wrap_future(self._pool.submit(fn))

    def post(self, fn: Callable[[], T]) -> Future[T]:
        """Queue ``fn`` without waiting (safe from a cancelled task: nothing is awaited)."""
        return self._pool.submit(fn)

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the session thread and block until it returns (start-up, shutdown)."""
        return self._pool.submit(fn).result()

    def close(self) -> None:
        self._pool.shutdown(wait=True)


class SessionWorkers:
    """Threads running one session's strategy work at a time, under the session's lock."""

    def __init__(self, workers: int = DEFAULT_WORKERS) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="contextfold-work")

    def submit(self, session: Branch, fn: Callable[[], T]) -> Future[T]:
        """Queue ``fn``, to run holding ``session.lock``."""

        def locked() -> T:
            with session.lock:
                return fn()

        return self._pool.submit(locked)

    async def run(self, session: Branch, fn: Callable[[], T]) -> T:
        """Run ``fn`` holding ``session.lock`` and await its result."""
        return await asyncio.wrap_future(self.submit(session, fn))

    def close(self) -> None:
        self._pool.shutdown(wait=True)
