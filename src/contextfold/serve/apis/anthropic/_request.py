"""A Messages request as the proxy holds it: what every API's has, and the client's cache
breakpoints (read apart from the conversation, placed again on the view upstream)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from contextfold.serve.apis.anthropic._cache import Marks
from contextfold.serve.exchange import ClientRequest

__all__ = ["AnthropicRequest"]


@dataclass(frozen=True, slots=True)
class AnthropicRequest(ClientRequest):
    """An Anthropic Messages request."""

    api: ClassVar[str] = "anthropic"
    marks: Marks = field(default_factory=Marks)
    """The client's ``cache_control`` breakpoints."""
