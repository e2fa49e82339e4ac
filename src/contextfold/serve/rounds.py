"""The upstream calls of one request: the view, and the strategy's own tools answered between.

The first call sends the strategy's view with the client's tools plus the strategy's own
(``restore``, ``recall``; left out when the client defines a tool of the same name or says
``tool_choice: none``). When the model calls one of the strategy's tools, the proxy answers
it and calls again with the call and its answer appended; the client never sees that
exchange. Client tools called in the same message are answered ``not run`` (the model calls
them again). The last allowed call offers the strategy's tools no more, so the model answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contextfold.core.messages import to_openai
from contextfold.serve.errors import UpstreamError
from contextfold.serve.request import ChatRequest
from contextfold.serve.sessions import Turn

__all__ = ["Rounds", "first_message"]

_NOT_RUN = (
    "not run: the proxy answered the context tool called beside it first; "
    "call {name} again if you still need it"
)


@dataclass(slots=True)
class Rounds:
    """The state of one request's upstream calls."""

    request: ChatRequest
    own: list[dict[str, Any]]
    messages: list[dict[str, Any]]
    max_rounds: int
    done: int = 0
    texts: list[str] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)

    @classmethod
    def start(cls, request: ChatRequest, turn: Turn, max_rounds: int) -> Rounds:
        clash = request.tool_names
        none = request.body.get("tool_choice") == "none"
        own = [] if none else [t for t in turn.own_tools if t["function"]["name"] not in clash]
        messages = [to_openai(m) for m in turn.view.messages]
        return cls(request, own, messages, max_rounds)

    @property
    def last(self) -> bool:
        """Whether the next call is the last one allowed."""
        return self.done >= self.max_rounds - 1

    def body(self, *, stream: bool) -> dict[str, Any]:
        """The body of the next upstream call."""
        body = {k: v for k, v in self.request.body.items() if k != "stream_options"}
        body["messages"] = list(self.messages)
        tools = [*self.request.tools, *([] if self.last else self.own)]
        if tools:
            body["tools"] = tools
        body["stream"] = stream
        if stream:
            body["stream_options"] = {"include_usage": True}
        return body

    def own_calls(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        """The calls in ``message`` of the strategy's own tools (none on the last round)."""
        names = {t["function"]["name"] for t in self.own}
        calls = message.get("tool_calls") or []
        return [c for c in calls if c.get("function", {}).get("name") in names]

    def add_usage(self, usage: dict[str, int]) -> None:
        for key, value in usage.items():
            self.usage[key] = self.usage.get(key, 0) + value
        self.done += 1

    def continue_with(self, message: dict[str, Any], answers: dict[str, str]) -> None:
        """Append the round's assistant message and a result for each of its calls."""
        if message.get("content"):
            self.texts.append(str(message["content"]))
        self.messages.append(message)
        for call in message.get("tool_calls") or []:
            name = call.get("function", {}).get("name", "")
            text = answers.get(call["id"], _NOT_RUN.format(name=name))
            self.messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})

    def client_usage(self) -> dict[str, Any]:
        """Usage summed over every upstream call of the request, in OpenAI form."""
        prompt, completion = (
            self.usage.get("prompt_tokens", 0),
            self.usage.get("completion_tokens", 0),
        )
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": self.usage.get("cached_tokens", 0)},
        }

    def final(self, message: dict[str, Any]) -> dict[str, Any]:
        """The message the client gets: text of every round, the last round's calls."""
        text = "".join([*self.texts, message.get("content") or ""])
        return {**message, "content": text or (None if message.get("tool_calls") else "")}


def first_message(reply: dict[str, Any], where: str) -> dict[str, Any]:
    """``choices[0].message`` of a completion; an UpstreamError when it has none."""
    choices = reply.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict):
            message.setdefault("role", "assistant")
            for call in message.get("tool_calls") or []:
                call.setdefault("type", "function")
            return message
    raise UpstreamError(502, f"upstream {where} answered no choices[0].message: {str(reply)[:200]}")
