"""The APIs ``contextfold serve`` speaks, one subpackage each (``apis/<api>/``) exporting one
:class:`~contextfold.serve.apis.spec.ApiSpec`; :data:`APIS` registers them by name. A new API
is a subpackage and a line here (what the subpackage holds: :class:`ApiSpec`)."""

from __future__ import annotations

from contextfold.serve.apis.anthropic import ANTHROPIC
from contextfold.serve.apis.chat import CHAT
from contextfold.serve.apis.gemini import GEMINI
from contextfold.serve.apis.responses import RESPONSES
from contextfold.serve.apis.spec import ApiSpec

__all__ = ["APIS", "ApiSpec", "served_apis"]

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
