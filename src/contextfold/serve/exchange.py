"""What passes between the proxy's parts in no API's shape: a client's request, an upstream
call, its reply and a streamed reply's deltas, and the two edges each API implements.

A request of any API is read into a :class:`ClientRequest` holding the conversation as history
steps (each API's subclass adds what only that API's modules read); a :class:`Wire` (the
upstream's API) writes the strategy's view as its body and reads the reply back into a
:class:`Reply`; a :class:`ClientWriter` (the client's API) writes the answer the client gets,
whole or as a stream of events. No strategy sees any of this.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from contextfold.core.messages import AssistantMessage, Message
from contextfold.core.view import Provenance
from contextfold.serve.sessions.conversation import Conversation

if TYPE_CHECKING:
    from contextfold.serve.errors import ApiError

__all__ = [
    "STOP_KINDS",
    "USAGE_KEYS",
    "Call",
    "ClientRequest",
    "ClientStream",
    "ClientWriter",
    "Delta",
    "HeaderFamily",
    "Reader",
    "Reply",
    "Stop",
    "Wire",
    "add_usage",
]

USAGE_KEYS = (
    "prompt_tokens",
    "cached_tokens",
    "cache_write_tokens",
    "cache_write_1h_tokens",
    "completion_tokens",
)
"""A call's usage: every prompt token (cached or not), those read from the provider's cache,
those written to it (all of them; ``cache_write_1h_tokens``: the part written for an hour,
Anthropic's), and the completion's."""

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
class ClientRequest(ABC):
    """A checked request of one of the APIs served: what every API's request has. Each API
    reads its requests into its own subclass, which names the API (:attr:`api`) and adds the
    fields only that API's modules read (Chat's ``stream_options``, Anthropic's cache marks)."""

    api: ClassVar[str]
    """The client's API (its name in :data:`~contextfold.serve.apis.APIS`)."""
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

    @property
    def text_tools(self) -> frozenset[str]:
        """The names of the client's tools whose input is free text, not JSON arguments
        (none unless its API has such tools)."""
        return frozenset()

    @abstractmethod
    def chat_options(self) -> dict[str, Any]:
        """The options of a Chat Completions body for this request, for a Chat Completions
        upstream (no messages, tools or stream): those such a server has, translated."""

    @abstractmethod
    def chat_tool(self, tool: dict[str, Any]) -> dict[str, Any] | None:
        """One of the client's :attr:`tools` as a Chat Completions function tool; None for
        one a Chat Completions server cannot be given (it runs on the provider's servers)."""


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


STOP_KINDS = ("stop", "tool_calls", "length", "content_filter")
"""Why a reply ended, in no API's words: it was done, it called tools, it hit a length
limit, or a filter cut or refused it."""


@dataclass(frozen=True, slots=True)
class Stop:
    """Why a reply ended: its :data:`STOP_KINDS` kind, which each client API words its own
    way (one table each, in its package), and the upstream's own word for it (``word``, in
    the API ``api``: Gemini's ``RECITATION``, Anthropic's ``pause_turn``), which a client of
    that API gets back as it came; ``said``: the upstream's own fields about it (a Gemini
    upstream's ``promptFeedback`` for a prompt it blocked), for such a client too."""

    kind: str
    api: str = ""
    word: str = ""
    said: dict[str, Any] = field(default_factory=dict)

    def own(self, api: str) -> str:
        """The upstream's word when a client of ``api`` may be given it (else empty)."""
        return self.word if self.api == api else ""

    def said_to(self, api: str) -> dict[str, Any]:
        """The upstream's fields a client of ``api`` is given (none for another API's)."""
        return self.said if self.api == api else {}


@dataclass(frozen=True, slots=True)
class Reply:
    """One upstream call's answer: an :class:`~contextfold.core.messages.AssistantMessage` and
    its usage, in no API's shape."""

    message: AssistantMessage
    usage: dict[str, int]
    stop: Stop | None
    """Why it ended (None: the upstream did not say)."""
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


@dataclass(frozen=True, slots=True)
class HeaderFamily:
    """A provider's headers: those a client's call passes on to an upstream of the same
    provider (never to another's), as its APIs share them (OpenAI's Chat Completions and
    Responses, Anthropic's Messages)."""

    name: str
    """The provider (``openai``): a client's headers go only to an upstream of the same."""
    passed: tuple[str, ...]
    """The API's own headers passed on as the client sent them (``anthropic-version``)."""
    lists: tuple[str, ...] = ()
    """Those whose value is a comma-separated list: sent more than once, all values go."""
    key: str | None = None
    """The header of the client's own key besides ``Authorization`` (``x-api-key``)."""


class Wire(Protocol):
    """The upstream's API: a call written as its body, its replies read back."""

    @property
    def api(self) -> str:
        """The upstream's API (its name in :data:`~contextfold.serve.apis.APIS`)."""
        ...

    def path(self, call: Call) -> str:
        """Where ``call`` goes, after the upstream's base URL (``/chat/completions``; an API
        may name the call's model or whether it streams there)."""
        ...

    @property
    def family(self) -> HeaderFamily:
        """Its provider's headers (those its clients pass on)."""
        ...

    @property
    def done(self) -> str | None:
        """The data of the event that ends a stream (``[DONE]``), if the API sends one."""
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

    def end(self, final: AssistantMessage, stop: Stop, usage: dict[str, int]) -> list[bytes]: ...

    def error(self, exc: ApiError) -> bytes: ...


class ClientWriter(Protocol):
    """The client's API: the answer it gets."""

    def respond(
        self, final: AssistantMessage, stop: Stop, usage: dict[str, int], last: Reply
    ) -> dict[str, Any]: ...

    def stream(self) -> ClientStream: ...
