"""A store that holds one request's writes until the request has succeeded.

:class:`BufferedStore` wraps the real :class:`~contextfold.core.protocols.Store`: reads go
through, writes (a new session, steps, fold records, calls) wait in order until
:meth:`BufferedStore.commit` replays them on the real store, or :meth:`BufferedStore.discard`
drops them. So a request the upstream fails, or a client that hangs up mid-stream, leaves
nothing behind; each write is still its own transaction when committed, so even a crash in
the middle of a commit leaves a consistent store (a session with fewer steps).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from contextfold.core.folds import FoldRecord
from contextfold.core.history import Step
from contextfold.core.messages import AssistantMessage, Message, SystemMessage
from contextfold.core.protocols import SessionRecord, Store

__all__ = ["BufferedStore"]


class BufferedStore:
    """Writes buffered until :meth:`commit`; reads from the wrapped store."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self._pending: list[Callable[[], None]] = []

    @property
    def pending(self) -> int:
        """Writes waiting for :meth:`commit`."""
        return len(self._pending)

    def commit(self) -> None:
        """Write everything buffered to the wrapped store, in order."""
        pending, self._pending = self._pending, []
        for write in pending:
            write()

    def discard(self) -> None:
        """Forget everything buffered."""
        self._pending = []

    def close(self) -> None:
        """Forget everything buffered; the wrapped store stays open (its opener closes it)."""
        self.discard()

    def create_session(
        self,
        session_id: str,
        *,
        system: SystemMessage | None,
        counter: str,
        meta: Mapping[str, Any],
    ) -> None:
        meta = dict(meta)
        self._pending.append(
            lambda: self.inner.create_session(session_id, system=system, counter=counter, meta=meta)
        )

    def append_step(self, session_id: str, step: Step) -> None:
        self._pending.append(lambda: self.inner.append_step(session_id, step))

    def append_fold(self, session_id: str, record: FoldRecord) -> None:
        self._pending.append(lambda: self.inner.append_fold(session_id, record))

    def record_call(
        self,
        session_id: str,
        *,
        step: int,
        messages: Sequence[Message],
        usage: Mapping[str, int],
    ) -> None:
        messages, usage = tuple(messages), dict(usage)
        self._pending.append(
            lambda: self.inner.record_call(session_id, step=step, messages=messages, usage=usage)
        )

    def load_session(self, session_id: str) -> SessionRecord:
        return self.inner.load_session(session_id)

    def list_sessions(self) -> list[str]:
        return self.inner.list_sessions()

    def load_calls(self, session_id: str) -> list[dict[str, Any]]:
        return self.inner.load_calls(session_id)

    def record_reply(self, session_id: str, *, step: int, message: AssistantMessage) -> None:
        self._pending.append(
            lambda: self.inner.record_reply(session_id, step=step, message=message)
        )

    def load_replies(self, session_id: str, *, step: int) -> list[AssistantMessage]:
        return self.inner.load_replies(session_id, step=step)
