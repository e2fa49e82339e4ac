"""The upstream calls of one request: the view, and the strategy's own tools answered between.

The first call sends the strategy's view with the client's tools plus the strategy's own
(``restore``, ``recall``; left out when the client defines a tool of the same name or says
``tool_choice: none``). When the model calls one of the strategy's tools, the proxy answers
it and calls again with the call and its answer appended; the client never sees that
exchange. Client tools called in the same message are answered ``not run`` (the model calls
them again). The last allowed call offers the strategy's tools no more, so the model answers;
a model that calls them anyway has those calls taken out of what the client gets (told so in
the text when nothing else is left): the client never sees a tool it did not define.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contextfold.core.messages import Message, from_openai, to_openai
from contextfold.serve.request import ChatRequest
from contextfold.serve.sessions import Turn

__all__ = ["Rounds"]

_NOT_RUN = (
    "not run: the proxy answered the context tool called beside it first; "
    "call {name} again if you still need it"
)
_NO_ANSWER = (
    "[contextfold: no answer; the model still called {names} after {rounds} upstream calls, "
    "the most one request may make. Ask again to continue.]"
)


@dataclass(slots=True)
class Rounds:
    """The state of one request's upstream calls."""

    request: ChatRequest
    own: list[dict[str, Any]]
    messages: list[dict[str, Any]]
    max_rounds: int
    hidden: frozenset[str] = frozenset()
    """Names of the strategy's tools the client did not define (never shown to it)."""
    done: int = 0
    texts: list[str] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    view: tuple[Message, ...] = ()
    """The view's messages (``messages`` starts with them, as OpenAI dicts)."""

    @classmethod
    def start(cls, request: ChatRequest, turn: Turn, max_rounds: int) -> Rounds:
        clash = request.tool_names
        none = request.body.get("tool_choice") == "none"
        ours = [t for t in turn.own_tools if t["function"]["name"] not in clash]
        messages = [to_openai(m) for m in turn.view.messages]
        hidden = frozenset(t["function"]["name"] for t in ours)
        own = [] if none else ours
        return cls(request, own, messages, max_rounds, hidden, view=turn.view.messages)

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

    def sent_messages(self) -> list[Message]:
        """What the last call was sent, as messages (the view's own, then the rounds')."""
        return [*self.view, *(from_openai(m) for m in self.messages[len(self.view) :])]

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
        """The message the client gets: text of every round (or :meth:`note`), the last
        round's calls of the client's own tools."""
        out = {k: v for k, v in message.items() if k != "tool_calls"}
        calls = self._client_calls(message)
        if calls:
            out["tool_calls"] = calls
        text = "".join([*self.texts, message.get("content") or ""]) or self.note(message)
        out["content"] = text or (None if calls else "")
        return out

    def note(self, message: dict[str, Any]) -> str:
        """What the client is told when the last message called only the strategy's tools
        and no round had any text (empty otherwise)."""
        texts = [*self.texts, message.get("content") or ""]
        names = sorted({c["function"]["name"] for c in message.get("tool_calls") or []})
        if any(texts) or not names or self._client_calls(message):
            return ""
        return _NO_ANSWER.format(names=", ".join(names), rounds=self.done)

    def finish_reason(self, final: dict[str, Any], given: str | None) -> str:
        """The client's finish reason: ``tool_calls`` only when it gets some."""
        if final.get("tool_calls"):
            return "tool_calls"
        return given if given not in (None, "tool_calls") else "stop"

    def _client_calls(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        calls = message.get("tool_calls") or []
        return [c for c in calls if c["function"]["name"] not in self.hidden]
