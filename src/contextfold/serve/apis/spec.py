"""What an API the proxy speaks provides: :class:`ApiSpec`, one per ``apis/<api>/``
subpackage, looked up by name in :data:`~contextfold.serve.apis.APIS`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from contextfold.serve.edge.routes import ErrorShape, openai_error

if TYPE_CHECKING:
    from contextfold.serve.edge.routes import Endpoint
    from contextfold.serve.exchange import Wire
    from contextfold.serve.sessions.proxy import Proxy

__all__ = ["ApiSpec"]


@dataclass(frozen=True, slots=True)
class ApiSpec:
    """One API, all the shared machinery knows of it. Its subpackage holds:

    - its request type: a :class:`~contextfold.serve.exchange.ClientRequest` subclass naming
      the API (``api``), with the fields only its modules read, and its options and tools as
      a Chat Completions upstream takes them (``chat_options``, ``chat_tool``);
    - its :attr:`routes`: read the body (:mod:`~contextfold.serve.edge.request`'s shared checks),
      parse it into that request, answer with a
      :class:`~contextfold.serve.exchange.ClientWriter`
      (:func:`~contextfold.serve.edge.answer.answer`),
      errors in its shape (:attr:`errors`);
    - its :attr:`wire` (:class:`~contextfold.serve.exchange.Wire`): a call's body, the replies
      whole or streamed, its provider's :class:`~contextfold.serve.exchange.HeaderFamily`.
    """

    name: str
    """Its name in ``--upstream NAME:URL`` and in :data:`APIS` (``chat``)."""
    title: str
    """What clients and logs call it (``OpenAI Chat Completions``)."""
    routes: Callable[[Proxy], list[Endpoint]]
    """The endpoints serving its clients through ``proxy`` (each answers errors in
    :attr:`errors`)."""
    wire: Callable[[], Wire]
    """A wire for an upstream of this API."""
    errors: ErrorShape = openai_error
    """The status and body its clients get for an error (OpenAI's shape unless its own)."""
    base_path: str = ""
    """What an upstream's base URL of this API ends with, added when it is missing
    (Anthropic's ``/v1``: its SDK's base URLs have none)."""
    example_url: str = ""
    """An upstream base URL of this API, for messages (``https://api.anthropic.com``)."""
    listed: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    """What its clients read in ``GET /v1/models`` beside the upstream's list, made from it
    (Gemini's ``models``: its SDK lists there); the upstream's own fields win."""
    as_openai: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    """An upstream of this API's model list as OpenAI's (``{"object": "list", "data":
    [{"id"}]}``), which the other APIs' clients read in ``GET /v1/models`` and :attr:`listed`
    is made from (None: its list is OpenAI's shape already)."""
    serves_all: bool = False
    """Whether its wire takes a request of every API (by way of the request's
    ``chat_options`` and ``chat_tool``), as Chat Completions' does."""
    portable: bool = False
    """Whether its requests hold nothing an upstream of another API cannot be given (its
    options and tools as Chat Completions' say them), so every upstream serves it."""
