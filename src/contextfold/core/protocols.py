"""The extension points, each a small :class:`typing.Protocol`; implementations do not inherit.

- :class:`Strategy`: ``observe(step, history)`` after each append, ``render(history, budget)``
  before each model call.
- :class:`Store`: persists sessions (system message, metadata, steps).
- :class:`Model`, :class:`Environment`, :class:`UserSimulator`: live runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from contextfold.core.messages import AssistantMessage, Message, SystemMessage

if TYPE_CHECKING:
    from contextfold.core.history import History, Step
    from contextfold.core.view import View

__all__ = [
    "Completion",
    "Environment",
    "Model",
    "SessionRecord",
    "Store",
    "Strategy",
    "ToolProvider",
    "Usage",
    "UserSimulator",
]


@runtime_checkable
class Strategy(Protocol):
    """Renders a compact view of a history before every model call."""

    @property
    def name(self) -> str: ...

    def observe(self, step: Step, history: History) -> None:
        """Called after each append; may update the strategy's own state (never the history)."""
        ...

    def render(self, history: History, budget: int | None) -> View:
        """The view to send now. Must not mutate ``history``; ``budget`` is in tokens."""
        ...


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


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """A stored session, as :meth:`Store.load_session` returns it."""

    session_id: str
    system: SystemMessage | None
    counter: str
    """Name of the token counter the stored counts were made with."""
    steps: list[Step]
    meta: Mapping[str, Any] = field(default_factory=dict)


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

    def load_session(self, session_id: str) -> SessionRecord: ...

    def list_sessions(self) -> list[str]: ...


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
    """A chat model. ``tools`` are OpenAI function-tool schemas; usage is reported per call."""

    @property
    def name(self) -> str: ...

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]] = (),
        *,
        max_tokens: int | None = None,
    ) -> Completion: ...


@runtime_checkable
class Environment(Protocol):
    """Tools and state; ``call`` runs one tool and returns its output text."""

    def tools(self) -> Sequence[Mapping[str, Any]]: ...

    def call(self, name: str, arguments: Mapping[str, Any]) -> str: ...


@runtime_checkable
class UserSimulator(Protocol):
    """Plays the user in user-centric environments; None means the user ends the session."""

    def respond(self, messages: Sequence[Message]) -> str | None: ...
