"""What the framework adapters share: one :class:`~contextfold.session.Session` per conversation,
and the error for a framework that is not installed.

A framework's agent serves many conversations (LangGraph threads, PydanticAI conversation ids)
and a Session is one, so the adapters keep one per conversation key (:class:`Conversations`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from contextfold.core.errors import ConfigError, HistoryError
from contextfold.core.experience import Experience
from contextfold.core.protocols import Store, Strategy
from contextfold.core.tokens import TokenCounter
from contextfold.session import Prepared, Session
from contextfold.strategies.folding import FolderSource

__all__ = ["Conversations", "missing_framework"]


def missing_framework(exc: ImportError, module: str, package: str, extra: str) -> ImportError:
    """The error an adapter raises when its framework does not import: not installed, or a
    version without what the adapter uses."""
    if isinstance(exc, ModuleNotFoundError):
        problem = f"needs {package}, which is not installed ({exc})"
    else:
        problem = f"cannot use the installed {package} ({exc}); install the version it supports"
    return ImportError(
        f"contextfold.integrations.{module} {problem}: pip install 'contextfold[{extra}]'"
    )


class Conversations:
    """One Session per conversation key; the key None is one
    conversation of its own. ``hint`` is added to the error for a conversation that does not
    continue its session (it says how the framework tells conversations apart).

    All sessions are made with the same strategy spec, budget and store, and share one
    :class:`~contextfold.strategies.folding.FolderSource` (a folder model is built once). At most
    ``limit`` stay in memory, the least recently used dropped first; a dropped session costs only
    time: with a store it is resumed from it (:meth:`Session.open
    <contextfold.session.Session.open>`), without one it is rebuilt from the whole conversation the
    framework sends at its next call (folds made before run again).
    """

    def __init__(
        self,
        strategy: str | Mapping[str, Any] = "refold",
        *,
        budget: int | None = None,
        store: Store | None = None,
        folder: str | FolderSource | None = None,
        experience: Experience | None = None,
        counter: TokenCounter | str | None = None,
        limit: int = 1024,
        hint: str = "",
    ) -> None:
        if isinstance(strategy, Strategy):
            raise ConfigError(
                "give the adapter a strategy spec (a name such as 'refold', a dict or YAML), "
                "not a strategy object: each conversation gets a strategy of its own"
            )
        if limit < 1:
            raise ConfigError(f"limit must be at least 1 session, got {limit}")
        self._folders = folder if isinstance(folder, FolderSource) else FolderSource(default=folder)
        self._options: dict[str, Any] = {
            "budget": budget,
            "folder": self._folders,
            "experience": experience,
            "counter": counter,
        }
        self._spec, self._store, self._limit, self._hint = strategy, store, limit, hint
        probe = Session(strategy, budget=budget, folder=self._folders, counter=counter)
        self.tools: list[dict[str, Any]] = probe.own_tools
        """The schemas of the strategy's own tools (the same for every conversation)."""
        self._live: OrderedDict[str | None, Session] = OrderedDict()
        self._lock = threading.Lock()

    def session(self, key: str | None) -> Session:
        """The session of conversation ``key``: in memory, resumed from the store, or new."""
        with self._lock:
            found = self._live.get(key)
            if found is None:
                found = self._live[key] = self._make(key)
                while len(self._live) > self._limit:
                    self._live.popitem(last=False)
            self._live.move_to_end(key)
            return found

    def prepare(self, key: str | None, messages: Sequence[Any]) -> Prepared:
        """:meth:`Session.prepare <contextfold.session.Session.prepare>` in conversation
        ``key``; a conversation that does not continue its session says how to tell them
        apart."""
        try:
            return self.session(key).prepare(messages)
        except HistoryError as exc:
            raise HistoryError(f"{exc}; {self._hint}" if self._hint else str(exc)) from None

    def call_tool(self, key: str | None, name: str, arguments: Mapping[str, Any] | str) -> str:
        """Answer one of the strategy's own tools in conversation ``key``."""
        answer = self.session(key).call_tool(name, arguments)
        return answer if answer is not None else f"error: {name!r} is not a tool of the strategy"

    def end(self, key: str | None) -> None:
        """Conversation ``key`` is over: a learning strategy learns from it, and its session
        leaves memory."""
        with self._lock:
            session = self._live.pop(key, None)
        if session is not None:
            session.end()

    def _make(self, key: str | None) -> Session:
        store = self._store
        if store is not None and key is not None and key in store.list_sessions():
            return Session.open(store, key, strategy=self._spec, **self._options)
        return Session(self._spec, store=store, session_id=key, **self._options)
