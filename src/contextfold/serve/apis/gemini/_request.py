"""A Gemini request as the proxy holds it: what every API's request has, its tools one
function declaration each (so each is one Chat Completions function tool), and how its
options and tools go to a Chat Completions upstream (:mod:`._translate`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from contextfold.serve.apis.gemini._translate import chat_options, chat_tool_of
from contextfold.serve.exchange import ClientRequest

__all__ = ["GeminiRequest", "split_tools"]


@dataclass(frozen=True, slots=True)
class GeminiRequest(ClientRequest):
    """A ``generateContent`` request (its model from the URL, in :attr:`body`'s ``model``).
    Its :attr:`tools` are the client's split one function declaration each (a tool with none,
    such as ``googleSearch``, as it came); a Gemini upstream gets ``body["tools"]`` as sent."""

    api: ClassVar[str] = "gemini"

    def chat_options(self) -> dict[str, Any]:
        """``generationConfig`` and ``toolConfig`` as Chat Completions' options."""
        return chat_options(self.body)

    def chat_tool(self, tool: dict[str, Any]) -> dict[str, Any] | None:
        """A function declaration as a function tool; a tool that runs on Google's servers
        (``googleSearch``, ``codeExecution``) is None."""
        return chat_tool_of(tool)


def split_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Gemini ``tools`` one function declaration each (a tool declaring none as it came)."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        declared = tool.get("functionDeclarations") or []
        out += [{"functionDeclarations": [d]} for d in declared]
        rest = {k: v for k, v in tool.items() if k != "functionDeclarations"}
        if rest or not declared:
            out.append(rest)
    return out
