"""The APIs ``contextfold serve`` speaks, one subpackage each (``apis/<api>/``) exporting one
:class:`~contextfold.serve.apis.spec.ApiSpec`; :data:`APIS` registers them by name. A new API
is a subpackage and a line here. The subpackage holds:

- its request type: a :class:`~contextfold.serve.exchange.ClientRequest` subclass naming the
  API (``api``), with the fields only its modules read, and its options and tools as a Chat
  Completions upstream takes them (``chat_options``, ``chat_tool``);
- its routes (``ApiSpec.routes``): read the body (:mod:`~contextfold.serve.request`'s shared
  checks), parse it into that request, and answer with a
  :class:`~contextfold.serve.exchange.ClientWriter` (:func:`~contextfold.serve.answer.answer`);
- its error shape (``ApiSpec.errors``, OpenAI's by default) and its upstream base path;
- its :class:`~contextfold.serve.exchange.Wire` (``ApiSpec.wire``): the body of a call, its
  replies whole or streamed, its provider's :class:`~contextfold.serve.exchange.HeaderFamily`.
"""

from __future__ import annotations

from contextfold.serve.apis.anthropic import ANTHROPIC
from contextfold.serve.apis.chat import CHAT
from contextfold.serve.apis.responses import RESPONSES
from contextfold.serve.apis.spec import ApiSpec

__all__ = ["APIS", "ApiSpec", "served_apis"]

APIS: dict[str, ApiSpec] = {spec.name: spec for spec in (CHAT, ANTHROPIC, RESPONSES)}
"""Every API served, by name (Chat Completions first: the one every other translates to)."""


def served_apis(upstream: str) -> list[str]:
    """The APIs a proxy serves with an upstream of API ``upstream``: a Chat Completions
    upstream (or the embedded model) serves every API, translated; any other upstream serves
    requests of its own API."""
    return list(APIS) if upstream == "chat" else [upstream]
