"""A Responses request as the proxy holds it: what every API's has, and the item type of
each of the client's tools whose calls are not ``function_call`` s."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from contextfold.serve.apis.chat.to_chat import chat_tool_choice, common_options, function_tool
from contextfold.serve.exchange import ClientRequest

__all__ = ["ResponsesRequest"]

_SHELL = {
    "type": "object",
    "properties": {
        "type": {"type": "string", "enum": ["exec"]},
        "command": {"type": "array", "items": {"type": "string"}},
        "workdir": {"type": "string"},
        "timeout_ms": {"type": "integer"},
        "env": {"type": "object", "additionalProperties": {"type": "string"}},
    },
    "required": ["type", "command"],
}
"""``local_shell``'s action, as a function's parameters."""
_TEXT_INPUT = {
    "type": "object",
    "properties": {"input": {"type": "string", "description": "the tool's whole input"}},
    "required": ["input"],
}
"""A custom tool's free-form input, as a function's parameters (read back as the text)."""


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

    def chat_options(self) -> dict[str, Any]:
        """``max_output_tokens``, ``temperature``, ``top_p``, ``parallel_tool_calls``, a
        JSON-schema ``text.format`` and ``tool_choice``."""
        body = self.body
        out = common_options(body, limit="max_output_tokens")
        if "parallel_tool_calls" in body:
            out["parallel_tool_calls"] = body["parallel_tool_calls"]
        fmt = (body.get("text") or {}).get("format")
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            schema = {k: fmt[k] for k in ("name", "schema", "strict") if k in fmt}
            out["response_format"] = {"type": "json_schema", "json_schema": schema}
        choice = chat_tool_choice(body.get("tool_choice"))
        return out if choice is None else {**out, "tool_choice": choice}

    def chat_tool(self, tool: dict[str, Any]) -> dict[str, Any] | None:
        """A function as it is; a custom tool (free-form text, as Codex's ``apply_patch``)
        a function taking one string ``input``; ``local_shell`` a function taking the action;
        a server tool (web search) None."""
        kind = tool.get("type")
        if kind == "local_shell":
            return function_tool("local_shell", _SHELL, "Run a command.", given=tool)
        if kind == "custom":
            return function_tool(tool["name"], _TEXT_INPUT, given=tool)
        if kind == "function":
            parameters = tool.get("parameters") or {"type": "object"}
            return function_tool(tool["name"], parameters, given=tool)
        return None
