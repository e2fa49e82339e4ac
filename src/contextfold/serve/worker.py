"""The proxy's session thread: every store, history and strategy operation runs on it.

SQLite connections belong to the thread that opened them, and a history with its strategy is
not safe to share between threads; one thread owns them all and runs their work in arrival
order, while upstream calls (the slow part) run concurrently on the event loop. Rendering a
view takes milliseconds; a strategy that folds with a model holds the thread while it folds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

__all__ = ["SessionThread"]

T = TypeVar("T")


class SessionThread:
    """One worker thread; :meth:`run` awaits a function on it, :meth:`post` fires and forgets."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="contextfold-sessions")

    async def run(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the session thread and await its result."""
        return await asyncio.wrap_future(self._pool.submit(fn))

    def post(self, fn: Callable[[], object]) -> Future[object]:
        """Queue ``fn`` without waiting (safe from a cancelled task: nothing is awaited)."""
        return self._pool.submit(fn)

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the session thread and block until it returns (start-up, shutdown)."""
        return self._pool.submit(fn).result()

    def close(self) -> None:
        self._pool.shutdown(wait=True)
