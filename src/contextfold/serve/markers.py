"""The strategy's marker lines kept between the proxy and the model, in every API.

A :class:`~contextfold.core.protocols.Marking` strategy (refold) asks the model to end its
replies with lines meant for it alone: the client is shown each reply without them
(:meth:`Markers.split`, :class:`MarkerFilter`), and the history gets them back when the client
returns the reply (:class:`Served`), so the strategy still reads its markers.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace

from contextfold.core.messages import AssistantMessage, Message

__all__ = ["MarkerFilter", "Markers", "Served"]

Split = Callable[[str], tuple[str, str]]


@dataclass(frozen=True, slots=True)
class Markers:
    """The marking strategy's split, or none (then nothing is cut)."""

    split_text: Split | None = None

    def split(self, text: str) -> tuple[str, str]:
        return self.split_text(text) if self.split_text else (text, "")

    def shown(self, message: Message) -> Message:
        """An assistant message as the client is shown it (others as they are)."""
        if self.split_text is None or not isinstance(message, AssistantMessage):
            return message
        if not message.content:
            return message
        visible, cut = self.split_text(message.content)
        return replace(message, content=visible) if cut else message

    def filter(self) -> MarkerFilter:
        return MarkerFilter(self.split_text)


class MarkerFilter:
    """The text deltas of one streamed reply with its trailing marker block held back:
    :meth:`add` gives what can be sent now, :meth:`rest` what is left of the visible text.

    Whole replies are cut at once (:meth:`Markers.split`); a streamed one passes through here,
    which holds back only the lines that may turn out to be the final marker block, at most a
    line or so.
    """

    def __init__(self, split: Split | None) -> None:
        self._split = split
        self._text = ""
        self._sent = 0

    def add(self, delta: str) -> str:
        self._text += delta
        if self._split is None:  # nothing to hold back
            self._sent = len(self._text)
            return delta
        whole = self._text[: self._text.rfind("\n") + 1]  # complete lines only
        safe = self._split(whole)[0].rstrip()
        if len(safe) <= self._sent:
            return ""
        out, self._sent = safe[self._sent :], len(safe)
        return out

    def flush(self) -> str:
        """Everything held back, to send now (the reply went on past it)."""
        out, self._sent = self._text[self._sent :], len(self._text)
        return out

    def rest(self, visible: str) -> str:
        """What of ``visible`` (the reply's whole visible text) was not sent yet."""
        return visible[self._sent :]


class Served:
    """The marker lines cut from the replies served, by the reply as the client got it
    (its text and calls: however its API writes them back), the latest ``limit`` kept.

    When the client sends a reply back, the proxy appends its lines again (:meth:`restore`)
    before the step is stored, so the history holds what the model wrote and the strategy reads
    its markers, while the hash chain that finds the session is taken over the replies as the
    client sees them.
    """

    def __init__(self, limit: int = 4096) -> None:
        self.limit = limit
        self._cut: OrderedDict[tuple[object, ...], str] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, shown: AssistantMessage, cut: str) -> None:
        if not cut:
            return
        with self._lock:
            self._cut[_key(shown)] = cut
            while len(self._cut) > self.limit:
                self._cut.popitem(last=False)

    def restore(self, message: Message) -> Message:
        """``message`` with the marker lines cut from it put back, when it is a reply served."""
        if not isinstance(message, AssistantMessage) or not self._cut:
            return message
        with self._lock:
            cut = self._cut.get(_key(message))
        if cut is None:
            return message
        return replace(message, content=(message.content or "") + cut)


def _key(message: AssistantMessage) -> tuple[object, ...]:
    calls = tuple((c.id, c.name, _arguments(c.arguments)) for c in message.tool_calls)
    return (message.content or "", calls)


def _arguments(text: str) -> str:
    try:
        return json.dumps(json.loads(text), sort_keys=True)
    except ValueError:
        return text
