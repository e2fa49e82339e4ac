"""The APIs ``contextfold serve`` speaks, one subpackage each (``apis/<api>/``) exporting one
:class:`~contextfold.serve.apis.spec.ApiSpec`; :data:`APIS` registers them by name. A new API
is a subpackage and a line here, and imports from serve only its own package and
:data:`SURFACE` (what the subpackage holds: :class:`ApiSpec`)."""

from __future__ import annotations

from contextfold.serve.apis.anthropic import ANTHROPIC
from contextfold.serve.apis.chat import CHAT
from contextfold.serve.apis.gemini import GEMINI
from contextfold.serve.apis.responses import RESPONSES
from contextfold.serve.apis.spec import ApiSpec

__all__ = ["APIS", "SURFACE", "ApiSpec", "served_apis"]

SURFACE = (
    "contextfold.serve.apis.spec",  # ApiSpec: what an API package exports
    "contextfold.serve.exchange",  # the turn in the proxy's terms: ClientRequest, Reply, Stop
    "contextfold.serve.errors",  # ApiError, UpstreamError
    "contextfold.serve.config",  # ServeConfig, for an option an API reads
    "contextfold.serve.edge.request",  # a request's shared fields
    "contextfold.serve.edge.body",  # reading JSON objects from a body
    "contextfold.serve.edge.routes",  # Endpoint and the error shapes
    "contextfold.serve.edge.answer",  # answering a client from a turn
    "contextfold.serve.edge.streaming",  # server-sent events
    "contextfold.serve.edge.events",
    "contextfold.serve.edge.shapes",  # checking a reply's shape
    "contextfold.serve.sessions.proxy",  # the Proxy an endpoint hands the turn to
    "contextfold.serve.sessions.conversation",  # the conversation as the proxy matches it
    "contextfold.serve.upstream.pool",  # the Wire an API speaks upstream
    "contextfold.serve.apis.chat.wire",  # the hub: every API translates through Chat's
    "contextfold.serve.apis.chat.translate",
    "contextfold.serve.apis.chat.to_chat",
    "contextfold.serve.apis.chat.media",
)
"""The modules of serve an API package may import besides its own (tests/test_serve_rooms.py
checks it); Chat's are the hub the others translate through."""

APIS: dict[str, ApiSpec] = {spec.name: spec for spec in (CHAT, ANTHROPIC, RESPONSES, GEMINI)}
"""Every API served, by name (Chat Completions first: the one every other translates to)."""


def served_apis(upstream: str) -> list[str]:
    """The APIs a proxy serves with an upstream of API ``upstream``: a Chat Completions
    upstream (or the embedded model), or one whose wire takes every API's requests
    (:attr:`~ApiSpec.serves_all`), serves every API, translated; any other upstream serves
    requests of its own API, and of each API whose requests go to any upstream
    (:attr:`~ApiSpec.portable`), translated."""
    if upstream == "chat" or APIS[upstream].serves_all:
        return list(APIS)
    return [upstream, *(a for a, spec in APIS.items() if spec.portable and a != upstream)]
