"""The extension points, each a small :class:`typing.Protocol` that implementations do not inherit.

A strategy's whole contract (:class:`Strategy`, its class :class:`StrategyType` or
:class:`FoldingStrategyType`, :class:`StrategyConfig`, :class:`Transform`) and its
capabilities, each checked with ``isinstance``: declared here, never found with ``getattr``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from contextfold.core.messages import AssistantMessage, Message, SystemMessage

if TYPE_CHECKING:
    from contextfold.core.experience import Experience
    from contextfold.core.folds import FoldRecord
    from contextfold.core.history import History, Step
    from contextfold.core.ledger import LedgerEntry
    from contextfold.core.view import View

__all__ = [
    "Compacting",
    "Completion",
    "Environment",
    "Folding",
    "FoldingStrategyType",
    "Grounded",
    "Learning",
    "LedgerStore",
    "Marking",
    "Model",
    "SessionRecord",
    "SharedStore",
    "Store",
    "Strategy",
    "StrategyConfig",
    "StrategyType",
    "ToolProvider",
    "Transform",
    "Usage",
    "UserSimulator",
    "WindowedModel",
]


@runtime_checkable
class Strategy(Protocol):
    """Renders a compact view of a history before every model call.

    Optional capabilities: :class:`ToolProvider` (tools of its own, e.g. ``restore``),
    :class:`Folding` (folds with a model, outside ``render``), :class:`Compacting` (shrinks on
    demand when a view is over the budget, and counts the compactions it forced), :class:`Grounded`
    (checks what it keeps against the environment's files), :class:`Learning` (learns across the
    sessions of one workload). The rest: :class:`Store` (sessions, fold records and the call log;
    :class:`SharedStore` when other processes write at the same time, :class:`LedgerStore`
    when it keeps serve's ledger), and :class:`Model`,
    :class:`Environment`, :class:`UserSimulator` for live runs.
    """

    @property
    def name(self) -> str: ...

    def observe(self, step: Step, history: History) -> None:
        """Called after each append; may update the strategy's own state (never the history)."""
        ...

    def render(self, history: History, budget: int | None) -> View:
        """The view to send now; ``budget`` is in tokens.

        It must never alter the history it is given: not its steps, not their messages or
        events, not its fold log (a fold is :meth:`Folding.fold`'s, before the render). It
        may update the strategy's own bookkeeping: refold commits its advance of the folded
        boundary here, and the next render starts from it.
        """
        ...


class StrategyConfig(BaseModel):
    """A strategy's options, validated from a spec: frozen, unknown fields refused.

    Subclasses declare ``type: Literal["name"] = "name"`` and their own options, each with a
    default (the registry builds a strategy from its name alone). One that folds with a model
    is a :class:`~contextfold.strategies.folding.FolderConfig` (its ``folder`` option).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: str


@runtime_checkable
class StrategyType(Protocol):
    """A strategy class as the registry builds it: ``Config`` validates the spec's options
    and ``cls(config)`` builds the strategy.

    A class whose ``Config`` is a :class:`~contextfold.strategies.folding.FolderConfig`
    folds with a model and is a :class:`FoldingStrategyType` instead.
    """

    @property
    def Config(self) -> type[StrategyConfig]: ...

    def __call__(self, config: Any, /) -> Strategy:
        """``config``: an instance of ``Config``."""
        ...


@runtime_checkable
class FoldingStrategyType(Protocol):
    """A strategy class that folds with a model: ``cls(config, folder=...)``.

    Its ``Config`` is a :class:`~contextfold.strategies.folding.FolderConfig`; the registry
    resolves the config's ``folder`` option to a :class:`~contextfold.strategies.folding.Folder`
    and passes it. One whose ``Config`` is an
    :class:`~contextfold.strategies.folding.OptionalFolderConfig` also takes ``folder=None``
    (its model-free mode).
    """

    @property
    def Config(self) -> type[StrategyConfig]: ...

    def __call__(self, config: Any, /, *, folder: Any) -> Strategy:
        """``config``: an instance of ``Config``; ``folder``: a ``Folder`` (or None, above)."""
        ...


@runtime_checkable
class Transform(Protocol):
    """A strategy that rewrites a view, so a ``chain`` can run it after others: it observes
    steps as a :class:`Strategy` does, and :meth:`apply` rewrites the view the previous
    member left (``render``'s rules hold: the history and the view's messages stay as
    given; a new view is returned)."""

    @property
    def name(self) -> str: ...

    def observe(self, step: Step, history: History) -> None: ...

    def apply(self, view: View, history: History, budget: int | None) -> View: ...


@runtime_checkable
class ToolProvider(Protocol):
    """A strategy that offers the agent tools of its own (``restore``, ``recall``).

    The agent loop exposes :meth:`tools` to the model next to the environment's tools and routes
    calls to those names to :meth:`call_tool`; the result is an ordinary tool result step.
    """

    def tools(self) -> list[dict[str, Any]]:
        """OpenAI function-tool schemas."""
        ...

    def call_tool(self, name: str, arguments: Mapping[str, Any], history: History) -> str:
        """Run one of the strategy's tools; bad arguments give an error text, never raise."""
        ...


@runtime_checkable
class Folding(Protocol):
    """A strategy that folds with a model (the folder), outside ``render``.

    Deciding is cheap and happens in ``observe``; folding is :meth:`fold`, called by the loop
    and the harness before each render; ``render`` calls no model, and its view stays
    byte-identical between folds.
    Each fold, accepted or rejected, is appended to the history's fold log
    (:meth:`~contextfold.core.history.History.record_fold`, kept in the store), and the
    strategy's state is derived from that log, so a reopened session renders the same view
    without calling the model again.
    """

    def fold(self, history: History, budget: int | None) -> list[FoldRecord]:
        """Run the folds that are due now (may call the folder); returns the new records."""
        ...


@runtime_checkable
class Compacting(Protocol):
    """A strategy that can shrink its view on demand.

    The loop calls :meth:`compact` when a view is over the budget, then (for a
    :class:`Folding` strategy) :meth:`Folding.fold` and ``render`` again.
    """

    def compact(self, history: History, budget: int) -> bool:
        """Make the next fold or render shrink the view; False when there is nothing left to
        shrink."""
        ...

    @property
    def forced_compactions(self) -> int:
        """Compactions the strategy forced itself (the budget made it), so far."""
        ...


@runtime_checkable
class Grounded(Protocol):
    """A strategy that checks what it keeps against real files (CarryOn's grounder).

    A live run in a workspace environment calls :meth:`ground_in` once, before the first
    step, with the workspace's root: the strategy reads its files from then on (read-only),
    and takes their state at that moment as the task's start.
    """

    def ground_in(self, root: Path) -> None: ...


@runtime_checkable
class Learning(Protocol):
    """A strategy that learns across sessions (how long they run, how often the agent
    reaches back, how often folds commit: :mod:`contextfold.core.experience`).

    The harness (``--learn``) or the user gives every session's strategy the same
    :class:`~contextfold.core.experience.Experience` with :meth:`share` before its first
    step; the loop and replay call :meth:`end` once the session is over, and the strategy
    adds what the session showed. Without :meth:`share` it learns nothing across sessions.
    """

    def share(self, experience: Experience) -> None: ...

    def end(self, history: History) -> None:
        """The session is over: add it to the shared experience (once; no-op unshared)."""
        ...


@runtime_checkable
class Marking(Protocol):
    """A strategy whose views ask the model to end its replies with lines meant for the
    strategy alone (refold's ``PROGRESS:`` / ``STALE:`` markers).

    The proxy takes them out of what its client is shown (streamed replies too) and puts them
    back when the client sends the reply again, so the history keeps them and the strategy
    reads them; a client never sees them and its copy of the reply still matches.
    """

    def split_markers(self, text: str) -> tuple[str, str]:
        """``text`` as the client is shown it, and the marker lines that end it (empty when
        there are none): ``shown + markers == text``."""
        ...


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """A stored session, as :meth:`Store.load_session` returns it."""

    session_id: str
    system: SystemMessage | None
    counter: str
    """Name of the token counter the stored counts were made with."""
    steps: list[Step]
    meta: Mapping[str, Any] = field(default_factory=dict)
    folds: list[FoldRecord] = field(default_factory=list)
    """The session's fold log, in order."""


@runtime_checkable
class Store(Protocol):
    """Persists sessions. Appends are durable once the call returns."""

    def create_session(
        self,
        session_id: str,
        *,
        system: SystemMessage | None,
        counter: str,
        meta: Mapping[str, Any],
    ) -> None:
        """Create a session; raises StoreError if it already exists."""
        ...

    def append_step(self, session_id: str, step: Step) -> None:
        """Write one step in one transaction; raises StoreError if the index is not next."""
        ...

    def append_fold(self, session_id: str, record: FoldRecord) -> None:
        """Write one fold record (accepted or rejected) in one transaction."""
        ...

    def load_session(self, session_id: str) -> SessionRecord: ...

    def list_sessions(self) -> list[str]: ...

    def record_call(
        self,
        session_id: str,
        *,
        step: int,
        messages: Sequence[Message],
        usage: Mapping[str, int],
    ) -> None:
        """Keep the messages one model call was sent and the usage it reported.

        ``step`` is the index of the step the call's reply produces, so the session must hold
        exactly ``step`` steps (those the call was sent) when the record is written; otherwise
        raises StoreConflictError and writes nothing."""
        ...

    def load_calls(self, session_id: str) -> list[dict[str, Any]]:
        """The recorded calls in order: dicts with call, step, messages, usage, created_at."""
        ...

    def record_reply(self, session_id: str, *, step: int, message: AssistantMessage) -> None:
        """Keep a reply given to the session's first ``step`` steps that is not a step yet, as
        the history will hold it once the client sends it back (``contextfold serve``: with
        the strategy's marker lines, which the client was not shown). The session must hold
        exactly ``step`` steps; otherwise raises StoreConflictError and writes nothing."""
        ...

    def load_replies(self, session_id: str, *, step: int) -> list[AssistantMessage]:
        """The replies kept for the session's first ``step`` steps, the latest first."""
        ...

    def close(self) -> None:
        """Release what the store holds (a database connection); idempotent. Whoever opens a
        store closes it. A closed SQLite or PostgreSQL store raises StoreError on any further
        call; a memory store has nothing to release and stays readable."""
        ...


@runtime_checkable
class SharedStore(Protocol):
    """A store that other processes write to at the same time (replicas of ``contextfold
    serve`` on one PostgreSQL database). The proxy polls :meth:`step_counts` before each
    request to see the sessions other replicas created or extended, and a write that lost a
    race raises :class:`~contextfold.core.errors.StoreConflictError`."""

    def step_counts(self) -> dict[str, int]:
        """How many steps every session holds now."""
        ...


@runtime_checkable
class LedgerStore(Protocol):
    """A store that keeps ``contextfold serve``'s ledger: every upstream call as the upstream
    billed it, beside what it would have cost direct
    (:class:`~contextfold.core.ledger.LedgerEntry`), written as the calls happen. The proxy
    keeps one in every store that is one (all of contextfold's are); ``contextfold savings``
    reads it back."""

    def record_ledger(self, entry: LedgerEntry) -> None:
        """Write one entry (durable once the call returns, like an append)."""
        ...

    def load_ledger(self) -> list[LedgerEntry]:
        """Every entry, in the order written."""
        ...


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one model call."""

    prompt_tokens: int = 0
    cached_tokens: int = 0
    """Prompt tokens the server served from its prefix cache (when it reports them)."""
    completion_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Completion:
    message: AssistantMessage
    usage: Usage


@runtime_checkable
class Model(Protocol):
    """A chat model. ``tools`` are OpenAI function-tool schemas; usage is reported per call.

    ``response_schema`` (a JSON schema) asks for a reply that is one JSON object of that
    schema, in the text: a backend enforces it where it can (a grammar in the embedded engine,
    ``response_format`` on OpenAI-compatible servers that support it) and otherwise ignores it;
    the caller validates the reply either way.
    """

    @property
    def name(self) -> str: ...

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]] = (),
        *,
        max_tokens: int | None = None,
        response_schema: Mapping[str, Any] | None = None,
    ) -> Completion: ...


class WindowedModel(Model, Protocol):
    """A model with a fixed context window that measures a prompt before it is sent (the
    embedded engine): ``serve --upstream local`` fits each request to it first."""

    @property
    def n_ctx(self) -> int:
        """Tokens its context holds: the prompt and the reply together."""

    def prompt_tokens(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] = ()
    ) -> int:
        """Tokens of the prompt :meth:`complete` would evaluate for these messages and tools."""

    def text_tokens(self, text: str) -> int:
        """Tokens of ``text`` inside a message."""


@runtime_checkable
class Environment(Protocol):
    """Tools and state; ``call`` runs one tool and returns its output text."""

    def tools(self) -> Sequence[Mapping[str, Any]]: ...

    def call(self, name: str, arguments: Mapping[str, Any]) -> str: ...


@runtime_checkable
class UserSimulator(Protocol):
    """Plays the user in user-centric environments; None means the user ends the session."""

    def respond(self, messages: Sequence[Message]) -> str | None: ...
