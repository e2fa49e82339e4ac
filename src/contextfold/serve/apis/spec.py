"""What an API the proxy speaks provides: :class:`ApiSpec`, one per ``apis/<api>/``
subpackage, looked up by name in :data:`~contextfold.serve.apis.APIS`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from contextfold.serve.routes import ErrorShape, openai_error

if TYPE_CHECKING:
    from contextfold.serve.exchange import Wire
    from contextfold.serve.proxy import Proxy
    from contextfold.serve.routes import Endpoint

__all__ = ["ApiSpec"]


@dataclass(frozen=True, slots=True)
class ApiSpec:
    """One API: its client side (the routes that read a request into its
    :class:`~contextfold.serve.exchange.ClientRequest` subclass and write the answer, whole or
    streamed, errors in its shape) and its upstream side (the
    :class:`~contextfold.serve.exchange.Wire` that writes a call's body and reads the reply,
    whole or streamed, and names its provider's headers). The shared machinery knows an API
    only by this."""

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
