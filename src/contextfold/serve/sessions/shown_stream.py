"""A streamed request's reply as the client is shown it, round after round: text as the
upstream sends it, each text block's possible marker lines held back (a
:class:`~.markers.MarkerFilter`), what follows held text or a call held until the proxy knows
what it is; at each round's end the rest of the text a whole reply would show
(:meth:`~.rounds.Rounds.final`) goes out among what waited, in order. So a streamed client
gets the blocks, calls and words of the whole reply, and what it saw is always their start.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from contextfold.core.messages import AssistantMessage, ToolCall
from contextfold.serve.exchange import ClientStream, Delta, Stop
from contextfold.serve.sessions.markers import ROUNDS_APART, MarkerFilter, Markers

__all__ = ["ShownStream"]

_log = logging.getLogger(__name__)


class ShownStream:
    """The client's events of one streamed request, across its rounds (see the module)."""

    def __init__(self, out: ClientStream, markers: Markers) -> None:
        self.out = out
        self.markers = markers
        self.sent = ""
        """Every text sent to the client so far, with the blank lines between rounds."""
        self.shown = ""
        """The text the client is shown of the rounds that ended."""
        self._round()

    def _round(self) -> None:
        self.filter: MarkerFilter = self.markers.filter()
        self.waiting: list[tuple[str, Any]] = []
        """Events not sent yet, in order: texts, blocks, ends of text blocks, calls (by
        their index in the round's reply)."""
        self.holding = False  # a call came: everything waits for the round's end
        self.calls = 0
        self.round_sent = False
        self.broken = False  # a text block ended: the next text starts a block of its own

    def delta(self, delta: Delta) -> list[bytes]:
        """The events to send now for one upstream delta."""
        kind, value = delta
        if kind == "text":
            if self.holding:
                self.waiting.append(("text", value))
                return []
            return self._release(self.filter.add(value))
        if kind == "reasoning":
            return self.out.delta(delta)
        self._end_text()
        if kind == "call":
            self.waiting.append(("call", self.calls))
            self.calls += 1
            self.holding = True
        elif kind == "block" and not self.waiting and not self.holding:
            return self.out.delta(delta)
        else:  # a block after held text, or the end of a text block
            self.waiting.append((kind, value))
        return []

    def round_end(self, visible: str) -> list[bytes]:
        """A round that goes on (the proxy answered its calls): the rest of its ``visible``
        text; the client sees none of its calls."""
        self.shown = ROUNDS_APART.join(t for t in (self.shown, visible) if t)
        events = self._drain(self.shown, [])
        self._round()
        return events

    def end(
        self, final: AssistantMessage, made: Sequence[ToolCall], stop: Stop, usage: dict[str, int]
    ) -> list[bytes]:
        """The last round's end: the rest of ``final`` (what the client gets; ``made`` are the
        calls of the round's reply, in order), then the API's closing events."""
        mine = {c.id for c in final.tool_calls}
        events = self._drain(final.content or "", [c if c.id in mine else None for c in made])
        sent = {c.id for c in made[: self.calls] if c.id in mine}
        rest = tuple(c for c in final.tool_calls if c.id not in sent)
        return events + self.out.end(replace(final, tool_calls=rest), stop, usage)

    def _end_text(self) -> None:
        if self.filter.held:
            self.waiting.append(("text", self.filter.held))
        self.filter = self.markers.filter()

    def _release(self, text: str) -> list[bytes]:
        """``text`` is shown: what waited before it goes out first."""
        if not text:
            return []
        events: list[bytes] = []
        for kind, value in self.waiting:  # texts, blocks and ends of blocks (never a call)
            events += self._waited(kind, value)
        self.waiting = []
        return events + self._text(text)

    def _waited(self, kind: str, value: Any) -> list[bytes]:
        if kind == "text":
            return self._text(value)
        if kind == "break":  # sent only before more text: a round's last text block stays
            self.broken = True  # open for the next round's, as a whole reply joins them
            return []
        return self.out.delta((kind, value))

    def _text(self, text: str) -> list[bytes]:
        if not text:
            return []
        if self.sent and not self.round_sent:  # a round's first words: a blank line first
            text = ROUNDS_APART + text
        self.round_sent = True
        self.sent += text
        events = self.out.delta(("break", None)) if self.broken else []
        self.broken = False
        return events + self.out.delta(("text", text))

    def _drain(self, target: str, calls: Sequence[ToolCall | None]) -> list[bytes]:
        """What waits, with ``target``'s text that the client has not got yet in place of the
        waiting texts (their marker lines cut), and the client's ``calls``."""
        if not target.startswith(self.sent):  # never expected: the stream cut differently
            _log.warning("contextfold serve: a streamed reply's text differs from its whole")
        rest = target[len(self.sent) :] if target.startswith(self.sent) else ""
        if self.sent and not self.round_sent and rest.startswith(ROUNDS_APART):
            rest = rest[len(ROUNDS_APART) :]  # :meth:`_text` puts the blank line back
        events: list[bytes] = []
        self._end_text()
        for kind, value in self.waiting:
            if kind == "text":
                events += self._text(rest[: len(value)])
                rest = rest[len(value) :]
            elif kind == "call":
                call = calls[value] if value < len(calls) else None
                events += self.out.delta(("call", call)) if call is not None else []
            else:
                events += self._waited(kind, value)
        self.waiting = []
        return events + self._text(rest)
