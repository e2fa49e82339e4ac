"""A Responses request as the proxy holds it: what every API's has, and the item type of
each of the client's tools whose calls are not ``function_call`` s."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from contextfold.serve.exchange import ClientRequest

__all__ = ["ResponsesRequest"]


@dataclass(frozen=True, slots=True)
class ResponsesRequest(ClientRequest):
    """An OpenAI Responses request."""

    api: ClassVar[str] = "responses"
    call_kinds: Mapping[str, str] = field(default_factory=dict)
    """The item type of each of the client's tools whose calls are not ``function_call`` s
    (a custom tool's ``custom_tool_call``, ``local_shell``'s)."""

    @property
    def text_tools(self) -> frozenset[str]:
        """The names of the client's custom (free-form text) tools."""
        return frozenset(n for n, k in self.call_kinds.items() if k == "custom_tool_call")
