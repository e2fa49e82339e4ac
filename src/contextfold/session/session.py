"""``Session``: one object between an agent's messages and its model.

Hand :meth:`Session.prepare` the whole conversation in OpenAI format before every model call and
send the view it returns; the history, the folds, the budget and the store are handled inside,
and nothing happens silently. The step itself (append, fold, render, the budget, the
strategy's tools) is the loop step every entry point shares
(:class:`~contextfold.core.driver.Driver`); a Session adds the messages' checks, the store's
metadata and resuming.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from contextfold.core.counters import resolve_counter
from contextfold.core.driver import Driver
from contextfold.core.errors import (
    ConfigError,
    ContextFoldError,
    MessageFormatError,
    StoreConflictError,
)
from contextfold.core.experience import Experience
from contextfold.core.grouping import group_steps
from contextfold.core.history import History
from contextfold.core.messages import SystemMessage
from contextfold.core.protocols import Learning, Store, Strategy
from contextfold.core.tokens import TokenCounter
from contextfold.session.appending import Seen, new_steps
from contextfold.session.prepared import Prepared, session_tools
from contextfold.strategies.folding import FolderSource
from contextfold.strategies.registry import build_strategy, spec_dict

__all__ = ["Session"]

StrategySpec = str | Mapping[str, Any] | Strategy
_META = "session"
"""The key of a session's own entry in its stored metadata (strategy spec, budget, counter)."""


class Session:
    """One conversation, its history and the strategy rendering it.

    ``strategy`` is a spec as :func:`~contextfold.strategies.registry.build_strategy` takes it
    (``"refold"``, ``"window keep=10"``, a dict, YAML) or a strategy object; ``budget`` the
    view's limit in tokens; ``store`` keeps the session (its steps, folds and every prepared
    view) under ``session_id`` (one is made when none is given), to be resumed with
    :meth:`open`; ``folder`` the model a folding strategy folds with (``scripted``,
    ``local``, ``openai:NAME``, or a :class:`~contextfold.strategies.folding.FolderSource`);
    ``experience`` what earlier sessions of the workload taught a learning strategy.

    Inside :meth:`prepare`, in order: every message is checked (an error names its position:
    ``messages[3].tool_calls[0].function.arguments``); only the steps the session does not hold yet
    are appended to its :class:`~contextfold.core.history.History` (written through to a store when
    one is given); the folds that are due run; the view is rendered and checked; a view over the
    budget is compacted or refused (:mod:`contextfold.core.pipeline`). The folds made and refused
    and the compactions are on the result. Messages may be dicts, the openai SDK's message objects,
    or contextfold messages.

    The history is append-only: a conversation whose earlier messages differ from those given
    before is refused with the first position that differs (a session is one conversation).
    :meth:`call_tool` answers the strategy's own tools (``restore``, ``recall``) and returns None
    for any other name, so a loop writes ``session.call_tool(name, args) or run_my_tool(name,
    args)``.
    """

    def __init__(
        self,
        strategy: StrategySpec = "refold",
        *,
        budget: int | None = None,
        store: Store | None = None,
        session_id: str | None = None,
        folder: str | FolderSource | None = None,
        experience: Experience | None = None,
        counter: TokenCounter | str | None = None,
    ) -> None:
        if budget is not None and budget < 1:
            raise ConfigError(f"budget must be at least 1 token, got {budget}")
        if store is not None:
            session_id = session_id or f"session-{uuid.uuid4().hex[:16]}"
            if session_id in store.list_sessions():
                raise StoreConflictError(_taken(session_id))
        self.store, self.session_id = store, session_id
        self.strategy = _build(strategy, folder)
        self.counter: TokenCounter = (
            counter if isinstance(counter, TokenCounter) else resolve_counter(counter)
        )
        self._meta = _meta(strategy, budget, counter)
        self._driver = Driver(self.strategy, History(counter=self.counter), budget=budget)
        """The loop step; on an empty history until the first :meth:`prepare` starts it."""
        self._started = False
        self._seen = Seen()
        self._ended = False
        if experience is not None:
            if not isinstance(self.strategy, Learning):
                raise ConfigError(
                    f"strategy {self.strategy.name!r} does not learn across sessions; "
                    "experience= applies to refold, carryon, ufold and chain"
                )
            self.strategy.share(experience)

    @classmethod
    def open(
        cls,
        store: Store,
        session_id: str,
        *,
        strategy: StrategySpec | None = None,
        budget: int | None = None,
        folder: str | FolderSource | None = None,
        experience: Experience | None = None,
        counter: TokenCounter | str | None = None,
    ) -> Session:
        """Resume a stored session: its history as stored, the strategy it was made with (or
        ``strategy``) observing every step; the next :meth:`prepare` takes the conversation
        from where it stopped. The budget and counter it was made with hold unless given."""
        record = store.load_session(session_id)
        meta = record.meta.get(_META)
        saved: Mapping[str, Any] = meta if isinstance(meta, Mapping) else {}
        spec = strategy if strategy is not None else saved.get("strategy")
        if spec is None:
            raise ConfigError(
                f"session {session_id!r} was not made with a strategy spec this Session can "
                "rebuild (a strategy object, or another tool); pass strategy="
            )
        session = cls(  # no store given: the stored session's id is not refused as taken
            spec,
            budget=budget if budget is not None else saved.get("budget"),
            folder=folder,
            experience=experience,
            counter=counter if counter is not None else saved.get("counter"),
        )
        session.store, session.session_id = store, session_id
        history = History.from_record(store, record, counter=session.counter)
        session._driver = Driver.resumed(session.strategy, history, budget=session.budget)
        session._started = True
        return session

    # -- the call ------------------------------------------------------------------------
    def prepare(self, messages: Sequence[Any], tools: Sequence[Any] | None = None) -> Prepared:
        """The view to send for ``messages`` (the whole conversation so far) offering
        ``tools`` (the caller's OpenAI tool schemas); see :class:`Session`. Raises
        :class:`~contextfold.core.errors.MessageFormatError` for a malformed message,
        :class:`~contextfold.core.errors.HistoryError` for a rewritten one and
        :class:`~contextfold.core.errors.ContextBudgetError` for a view that cannot fit."""
        if self._ended:
            raise ContextFoldError("this session has ended (end() was called); start a new one")
        if isinstance(messages, str | Mapping) or not messages:
            raise MessageFormatError(
                "must be the whole conversation so far: a non-empty list of messages",
                at="messages",
            )
        messages = list(messages)
        offered = session_tools(tools, self._driver.tool_schemas)
        parsed = self._seen.parse(messages)
        grouped = group_steps(parsed)
        if not grouped.steps:
            raise MessageFormatError("holds no user or assistant message", at="messages")
        if not self._started:
            self._start(grouped.system)
        driver = self._driver
        fresh = new_steps(driver.history, grouped)
        self._seen.remember(messages, parsed)
        for step_messages in fresh:
            driver.append(*step_messages)
        rendered = driver.prepare()
        driver.record_call(rendered)
        return Prepared.of(rendered, offered, driver.history)

    def call_tool(self, name: str, arguments: str | Mapping[str, Any] | None = None) -> str | None:
        """Answer a call of one of the strategy's own tools (arguments as JSON text or a
        mapping); arguments that are not a JSON object, or that the strategy fails on, give
        an error text. None for any other tool's name
        (:meth:`~contextfold.core.driver.Driver.call_tool`)."""
        answer = self._driver.call_tool(name, arguments)
        return None if answer is None else answer.text

    def end(self) -> None:
        """The session is over: a learning strategy adds it to its experience (once)."""
        if not self._ended:
            self._driver.end()
        self._ended = True

    @property
    def own_tools(self) -> list[dict[str, Any]]:
        """The schemas of the strategy's own tools (``restore``, ``recall``), which
        :meth:`call_tool` answers: what :meth:`prepare` adds to the caller's tools, for a
        framework's adapter to register before the first call."""
        return self._driver.own_tools

    @property
    def budget(self) -> int | None:
        """The view's limit in tokens (None: no limit), as the session was made with it."""
        return self._driver.budget

    @property
    def history(self) -> History | None:
        """The session's history (None before the first :meth:`prepare`)."""
        return self._driver.history if self._started else None

    # -- helpers -------------------------------------------------------------------------
    def _start(self, system: SystemMessage | None) -> None:
        try:
            history = History(
                system,
                counter=self.counter,
                store=self.store,
                session_id=self.session_id,
                meta={_META: self._meta},
            )
        except StoreConflictError as exc:
            assert self.session_id is not None
            raise StoreConflictError(_taken(self.session_id)) from exc
        self._driver = Driver(self.strategy, history, budget=self.budget)
        self._started = True


def _build(spec: StrategySpec, folder: str | FolderSource | None) -> Strategy:
    folders = folder if isinstance(folder, FolderSource) else FolderSource(default=folder)
    return build_strategy(spec, folders=folders)


def _meta(spec: StrategySpec, budget: int | None, counter: object) -> dict[str, Any]:
    """What :meth:`Session.open` rebuilds the session from (JSON values only)."""
    return {
        "strategy": None if isinstance(spec, Strategy) else spec_dict(spec),
        "budget": budget,
        "counter": counter if isinstance(counter, str) else None,
    }


def _taken(session_id: str) -> str:
    return (
        f"session {session_id!r} already exists in the store; Session.open(store, "
        f"{session_id!r}) resumes it, or give another session_id for a new session"
    )
