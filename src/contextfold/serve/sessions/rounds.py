"""The upstream calls of one request: the view, and the strategy's own tools answered between.

The model may reach back into the history with the strategy's tools (``restore``, ``recall``);
the proxy answers those itself and calls again, so the client never sees a tool it did not
define (:class:`Rounds`), whatever the APIs of the client and the upstream.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from contextfold.core.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from contextfold.core.view import Provenance
from contextfold.serve.exchange import Call, ClientRequest, Stop, add_usage
from contextfold.serve.sessions.markers import Cut, Markers, joined
from contextfold.serve.sessions.sessions import Turn

__all__ = ["Rounds"]

_NOT_RUN = (
    "not run: the proxy answered the context tool called beside it first; "
    "call {name} again if you still need it"
)
_SPELLED = "[Context note from the runtime, not from the user] {name}({arguments}) returned:"
_NO_ANSWER = (
    "[contextfold: no answer; the model still called {names} after {rounds} upstream calls, "
    "the most one request may make. Ask again to continue.]"
)


@dataclass(slots=True)
class Rounds:
    """The state of one request's upstream calls.

    The first call sends the strategy's view with the client's tools plus the strategy's own
    (``restore``, ``recall``; left out when the client defines a tool of the same name or says
    ``tool_choice: none``). When the model calls one of the strategy's tools, the proxy answers
    it and calls again with the call and its answer appended (:meth:`continue_with`); the client
    never sees that exchange. Client tools called in the same message are answered ``not run``
    (the model calls them again). The last allowed call offers the strategy's tools no more
    (and holds no call of them: :meth:`spelled_out`), so the model answers; a model that
    calls them anyway has those calls taken out of what the client gets (:meth:`final`; told
    so in the text when nothing else is left: :meth:`note`): the client never sees a tool it
    did not define. All of it is in the one conversation model, whatever the APIs of the
    client and the upstream.

    The client gets every round's text, in order, a blank line between two rounds' texts,
    each round's marker lines cut from that round (:meth:`final`, :func:`.markers.joined`).
    """

    request: ClientRequest
    own: list[dict[str, Any]]
    messages: list[Message]
    max_rounds: int
    settled: int | None = None
    provenance: tuple[Provenance, ...] = ()
    hidden: frozenset[str] = frozenset()
    """Names of the strategy's tools the client did not define (never shown to it)."""
    cached_through: int | None = None
    """How many leading messages an earlier call cached (:attr:`Turn.cached_through`)."""
    done: int = 0
    texts: list[str] = field(default_factory=list)
    """Each earlier round's text as the client is shown it (no trailing space)."""
    lines: list[str] = field(default_factory=list)
    """Each earlier round's marker lines (cut from its text)."""
    usage: dict[str, int] = field(default_factory=dict)
    markers: Markers = field(default_factory=Markers)
    sent: Call | None = None
    """The latest call (:meth:`call`), for the ledger."""

    @classmethod
    def start(
        cls, request: ClientRequest, turn: Turn, max_rounds: int, markers: Markers | None = None
    ) -> Rounds:
        ours = [t for t in turn.own_tools if t["function"]["name"] not in request.tool_names]
        hidden = frozenset(t["function"]["name"] for t in ours)
        own = ours if request.offer_own else []
        view = turn.view
        messages = list(view.messages)
        rounds = cls(request, own, messages, max_rounds, view.settled, view.provenance, hidden)
        rounds.cached_through = turn.cached_through
        rounds.markers = markers or Markers()
        return rounds

    @property
    def last(self) -> bool:
        """Whether the next call is the last one allowed."""
        return self.done >= self.max_rounds - 1

    def call(self, *, stream: bool) -> Call:
        """The next upstream call (the last one allowed: without the strategy's tools, its
        earlier calls of them written out, :meth:`spelled_out`)."""
        own = [] if self.last else self.own
        messages = self.spelled_out() if self.last else list(self.messages)
        self.sent = Call(
            self.request,
            messages,
            own,
            stream,
            self.settled,
            self.provenance,
            cached_through=self.cached_through,
        )
        return self.sent

    def spelled_out(self) -> list[Message]:
        """The messages with the rounds' calls of the strategy's tools taken out of their
        messages and each with its answer written as a note, so a call that offers those
        tools no more holds no call of them (Anthropic refuses a call of a tool not defined).
        A round's message left with nothing is left out."""
        view = len(self.provenance)
        out, made = list(self.messages[:view]), dict[str, ToolCall]()
        for message in self.messages[view:]:
            if isinstance(message, AssistantMessage):
                made.update((c.id, c) for c in message.tool_calls if c.name in self.hidden)
                calls = tuple(c for c in message.tool_calls if c.name not in self.hidden)
                kept = replace(message, tool_calls=calls)
                out += [kept] if kept.content or kept.tool_calls or kept.parts else []
            elif isinstance(message, ToolMessage) and message.tool_call_id in made:
                call = made[message.tool_call_id]
                note = _SPELLED.format(name=call.name, arguments=call.arguments)
                out.append(UserMessage(f"{note}\n{message.content}"))
            else:
                out.append(message)
        return out

    def own_calls(self, message: AssistantMessage) -> list[ToolCall]:
        """The calls in ``message`` of the strategy's own tools."""
        names = {t["function"]["name"] for t in self.own}
        return [c for c in message.tool_calls if c.name in names]

    def sent_messages(self) -> list[Message]:
        """What the last call was sent (the view's messages, then the rounds')."""
        return list(self.messages)

    def add_usage(self, usage: dict[str, int]) -> None:
        add_usage(self.usage, usage)
        self.done += 1

    def continue_with(self, message: AssistantMessage, answers: dict[str, str]) -> None:
        """Append the round's assistant message and a result for each of its calls."""
        shown = self.markers.cut(message)
        self.texts.append((shown.message.content or "").rstrip())
        self.lines.append(shown.lines)
        self.messages.append(message)
        for call in message.tool_calls:
            text = answers.get(call.id, _NOT_RUN.format(name=call.name))
            self.messages.append(ToolMessage(text, call.id))

    def final(self, message: AssistantMessage) -> Cut:
        """The message the client gets (and the marker lines cut from it): the text of every
        round (or :meth:`note`), the last round's calls of the client's own tools, its parts
        (a thinking block)."""
        last = self.markers.cut(message)
        calls = self._client_calls(message)
        out = joined(
            self.texts, self.lines, Cut(replace(last.message, tool_calls=calls), last.lines)
        )
        if out.message.content:
            return out
        content = self.note(message) or (None if calls else "")
        return joined((), (), Cut(replace(out.message, content=content), out.lines))

    def note(self, message: AssistantMessage) -> str:
        """What the client is told when the last message called only the strategy's tools
        and no round had any text to show (empty otherwise)."""
        texts = [*self.texts, self.markers.cut(message).message.content or ""]
        names = sorted({c.name for c in message.tool_calls})
        if any(texts) or not names or self._client_calls(message):
            return ""
        return _NO_ANSWER.format(names=", ".join(names), rounds=self.done)

    def finish_reason(self, final: AssistantMessage, given: Stop | None) -> Stop:
        """The client's finish reason: ``tool_calls`` only when it gets some (the upstream's
        own, with its word, while that holds)."""
        if given is not None and (given.kind == "tool_calls") == bool(final.tool_calls):
            return given
        return Stop("tool_calls" if final.tool_calls else "stop")

    def _client_calls(self, message: AssistantMessage) -> tuple[ToolCall, ...]:
        return tuple(c for c in message.tool_calls if c.name not in self.hidden)
