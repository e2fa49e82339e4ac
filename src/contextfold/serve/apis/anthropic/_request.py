"""A Messages request as the proxy holds it: what every API's has, and the client's cache
breakpoints (read apart from the conversation, placed again on the view upstream)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from contextfold.serve.apis.anthropic._cache import Marks
from contextfold.serve.apis.chat.to_chat import chat_tool_choice, common_options, function_tool
from contextfold.serve.exchange import ClientRequest

__all__ = ["AnthropicRequest"]


@dataclass(frozen=True, slots=True)
class AnthropicRequest(ClientRequest):
    """An Anthropic Messages request."""

    api: ClassVar[str] = "anthropic"
    marks: Marks = field(default_factory=Marks)
    """The client's ``cache_control`` breakpoints."""

    def chat_options(self) -> dict[str, Any]:
        """``max_tokens``, ``temperature``, ``top_p``, ``stop_sequences`` and ``tool_choice``."""
        out = common_options(self.body, limit="max_tokens")
        if self.body.get("stop_sequences"):
            out["stop"] = self.body["stop_sequences"]
        choice = chat_tool_choice(self.body.get("tool_choice"))
        return out if choice is None else {**out, "tool_choice": choice}

    def chat_tool(self, tool: dict[str, Any]) -> dict[str, Any] | None:
        """A client tool (no ``type``, or ``custom``) as a function; a server tool (web
        search) is None."""
        if tool.get("type") not in (None, "custom"):
            return None
        return function_tool(tool["name"], tool.get("input_schema") or _OBJECT, given=tool)


_OBJECT = {"type": "object"}
