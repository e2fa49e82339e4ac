"""What passes between the proxy's parts in no API's shape: a client's request, an upstream
call, its reply and a streamed reply's deltas, and the two edges each API implements.

A request of any API is read into a :class:`ClientRequest` holding the conversation as history
steps; a :class:`Wire` (the upstream's API) writes the strategy's view as its body and reads the
reply back into a :class:`Reply`; a :class:`ClientWriter` (the client's API) writes the answer
the client gets, whole or as a stream of events. No strategy sees any of this.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from contextfold.core.messages import AssistantMessage, Message
from contextfold.core.view import Provenance
from contextfold.serve.conversation import Conversation

if TYPE_CHECKING:
    from contextfold.serve.apis.anthropic._cache import Marks
    from contextfold.serve.errors import ApiError

__all__ = [
    "USAGE_KEYS",
    "Api",
    "Call",
    "ClientRequest",
    "ClientStream",
    "ClientWriter",
    "Delta",
    "Reader",
    "Reply",
    "Wire",
    "add_usage",
]

Api = Literal["chat", "anthropic", "responses", "gemini"]

USAGE_KEYS = ("prompt_tokens", "cached_tokens", "cache_write_tokens", "completion_tokens")
"""A call's usage: every prompt token (cached or not), those read from the provider's cache,
those written to it, and the completion's."""

Delta = tuple[str, Any]
"""A piece of a streamed reply: ``("text", str)``, ``("reasoning", str)``, ``("block",
dict)``: a block (an item) the upstream's API has that is not text or a call, whole;
``("break", None)``: a text block (a message item) ended; ``("call", None)``: a call's block
ended (the reply's next call). To a client's stream, ``("call", ToolCall)``: a call of the
client's, to write in place."""


def add_usage(total: dict[str, int], usage: dict[str, int]) -> None:
    for key in USAGE_KEYS:
        total[key] = total.get(key, 0) + usage.get(key, 0)


@dataclass(frozen=True, slots=True)
class ClientRequest:
    """A checked request of one of the APIs served."""

    api: Api
    body: dict[str, Any]
    """The client's body as sent (its conversation is replaced by the view upstream)."""
    conversation: Conversation
    family: str
    stream: bool
    tools: list[dict[str, Any]]
    """The client's tools, in its API's shape."""
    tool_names: frozenset[str]
    offer_own: bool
    """False when the client's ``tool_choice`` says no tool (the strategy's are not offered)."""
    headers: dict[str, str] = field(default_factory=dict)
    """What goes upstream with each call: credentials and the API's own headers (never kept)."""
    query: str = ""
    """The query string of the client's URL (``beta=true``), passed on to an upstream of its API."""
    include_usage: bool = False
    """Chat Completions: ``stream_options.include_usage``."""
    marks: Marks | None = None
    """Anthropic: the client's cache breakpoints."""
    call_kinds: Mapping[str, str] = field(default_factory=dict)
    """Responses: the item type of each of the client's tools whose calls are not
    ``function_call`` s (a custom tool's ``custom_tool_call``, ``local_shell``'s)."""

    @property
    def custom_tools(self) -> frozenset[str]:
        """The names of the client's custom (free-form text) tools."""
        return frozenset(n for n, k in self.call_kinds.items() if k == "custom_tool_call")


@dataclass(frozen=True, slots=True)
class Call:
    """One upstream call: the view (and the strategy tools' rounds after it) to send."""

    request: ClientRequest
    messages: Sequence[Message]
    own_tools: list[dict[str, Any]]
    """The strategy's tools to offer, as OpenAI function schemas (none on the last round)."""
    stream: bool
    settled: int | None = None
    """How many leading messages the strategy keeps as they are (:attr:`View.settled`)."""
    provenance: Sequence[Provenance] = ()
    """Where each of the view's messages comes from (the rounds' messages come after)."""
    cached_through: int | None = None
    """How many leading messages an earlier call of the session cached (marked, for APIs
    whose caches read only at marks)."""


@dataclass(frozen=True, slots=True)
class Reply:
    """One upstream call's answer: an :class:`~contextfold.core.messages.AssistantMessage` and
    its usage, in no API's shape."""

    message: AssistantMessage
    usage: dict[str, int]
    stop: str | None
    """``stop``, ``tool_calls``, ``length``, or the upstream's own reason."""
    raw: dict[str, Any] | None = None
    """The upstream's reply object (a client of the same API keeps its id and extra fields)."""


class Reader(Protocol):
    """One streamed upstream reply, put back together event by event."""

    def add(self, event: str, data: dict[str, Any]) -> list[Delta]:
        """Take one event (its name and data); the deltas to pass on now."""
        ...

    def reply(self) -> Reply:
        """The whole reply (a 502 when the stream ended before the reply did)."""
        ...


class Wire(Protocol):
    """The upstream's API: a call written as its body, its replies read back."""

    @property
    def api(self) -> Api: ...

    def path(self, call: Call) -> str:
        """Where ``call`` goes, after the upstream's base URL (``/chat/completions``; Gemini's
        names the model and the method)."""
        ...

    def body(self, call: Call) -> dict[str, Any]: ...

    def reply(self, data: dict[str, Any], call: Call, where: str) -> Reply: ...

    def reader(self, call: Call, where: str) -> Reader: ...

    def headers(self, given: dict[str, str], key: str | None) -> dict[str, str]:
        """The headers of a call: the client's (``given``), and what the API needs that they
        lack: the proxy's own upstream ``key`` when the client sent none, its version."""
        ...


class ClientStream(Protocol):
    """The events of one streamed answer, in the client's API."""

    def start(self) -> list[bytes]: ...

    def delta(self, delta: Delta) -> list[bytes]: ...

    def end(self, final: AssistantMessage, stop: str, usage: dict[str, int]) -> list[bytes]: ...

    def error(self, exc: ApiError) -> bytes: ...


class ClientWriter(Protocol):
    """The client's API: the answer it gets."""

    def respond(
        self, final: AssistantMessage, stop: str, usage: dict[str, int], last: Reply
    ) -> dict[str, Any]: ...

    def stream(self) -> ClientStream: ...
