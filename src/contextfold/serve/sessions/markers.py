"""The strategy's marker lines kept between the proxy and the model, in every API.

A :class:`~contextfold.core.protocols.Marking` strategy (refold) asks the model to end its
replies with lines meant for it alone. The client is shown each reply without them
(:meth:`Markers.cut`, block by block; streamed: :class:`MarkerFilter`), the replies of one
request's rounds joined without gluing (:func:`joined`), and the history gets the lines back
when the client returns the reply (:mod:`.served`), so the strategy still reads its markers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from contextfold.core.messages import AssistantMessage, Message
from contextfold.core.wire.layout import text_pieces, with_pieces

__all__ = ["Cut", "MarkerFilter", "Markers", "joined", "reply_key"]

Split = Callable[[str], tuple[str, str]]

ROUNDS_APART = "\n\n"
"""What stands between the texts of two rounds of one request (a blank line)."""


@dataclass(frozen=True, slots=True)
class Cut:
    """A reply as the client is shown it, and the marker lines cut from it."""

    message: AssistantMessage
    lines: str = ""
    """The lines cut, each on a line of its own after the shown text (empty: none)."""

    @property
    def kept(self) -> AssistantMessage:
        """The reply as the history holds it: the shown text, then the lines."""
        if not self.lines:
            return self.message
        return replace(self.message, content=(self.message.content or "") + self.lines)


@dataclass(frozen=True, slots=True)
class Markers:
    """The marking strategy's split, or none (then nothing is cut)."""

    split_text: Split | None = None

    def cut(self, message: AssistantMessage) -> Cut:
        """``message`` without the block of marker lines that ends its text, and without the
        blank space before that block. The cut is over all its text blocks (its layout's
        pieces): the lines that end the last block that shows text, and every block after
        it, which holds marker lines only or nothing (a Gemini part holding only a
        signature); each block keeps what it shows of its own."""
        text = message.content or ""
        if self.split_text is None or not text:
            return Cut(message)
        pieces = text_pieces(message)
        keep = _shown_length(pieces or [text], self.split_text)
        if keep is None:
            return Cut(message)
        return _trimmed(message, pieces or [text], laid=pieces is not None, keep=keep)

    def shown(self, message: Message) -> Message:
        """A message as the client is shown it (others than assistant messages as they are)."""
        if not isinstance(message, AssistantMessage):
            return message
        return self.cut(message).message

    def filter(self) -> MarkerFilter:
        return MarkerFilter(self.split_text)


def joined(texts: Sequence[str], lines: Sequence[str], last: Cut) -> Cut:
    """The reply of a request answered in rounds: the earlier rounds' shown ``texts`` (each
    without trailing space), a blank line between each and the next, then the last round's
    reply; every round's marker lines after it all, in order."""
    prefix = ROUNDS_APART.join(t for t in texts if t)
    message = last.message
    if prefix:
        body = message.content or ""
        message = _prepended(message, prefix + (ROUNDS_APART if body else ""))
    every = [*lines, last.lines]
    if not any(every):
        return Cut(message)
    pieces = text_pieces(message)
    out = _trimmed(message, pieces or [message.content or ""], laid=pieces is not None)
    return Cut(out.message, _own_line(out.message, out.lines + _lines(every)))


def _prepended(message: AssistantMessage, head: str) -> AssistantMessage:
    pieces = text_pieces(message)
    if pieces is None:
        return replace(message, content=head + (message.content or ""))
    shown = with_pieces(message, [head + pieces[0], *pieces[1:]])
    assert isinstance(shown, AssistantMessage)
    return shown


def _shown_length(pieces: Sequence[str], split: Split) -> int | None:
    """How much of the pieces' text (joined) is shown: up to the marker lines that end the
    last piece showing text, after which each piece holds marker lines only or is blank;
    None when no marker line ends them."""
    end, found = sum(map(len, pieces)), False
    for piece in reversed(pieces):
        start = end - len(piece)
        visible, lines = split(piece)
        found = found or bool(lines)
        if visible.strip():
            return start + len(visible) if found else None
        end = start
    return 0 if found else None


def _trimmed(
    message: AssistantMessage, pieces: list[str], *, laid: bool, keep: int | None = None
) -> Cut:
    """``message`` shown as ``pieces`` (a prefix of its text, piece by piece) without trailing
    space, or as its first ``keep`` characters; the rest of its text is the cut."""
    text = message.content or ""
    head = "".join(pieces)[: len(text) if keep is None else keep]
    keep = len(head.rstrip())
    sizes, left = [], keep
    for piece in pieces:
        sizes.append(min(len(piece), left))
        left -= sizes[-1]
    shown_text = text[:keep]
    if laid:
        start, kept = 0, []
        for size in sizes:
            kept.append(text[start : start + size])
            start += size
        relaid = with_pieces(message, kept)
        assert isinstance(relaid, AssistantMessage)
        message = relaid
    content = shown_text or (None if message.tool_calls else "")
    shown = replace(message, content=content)
    return Cut(shown, _own_line(shown, text[keep:]))


def _own_line(shown: AssistantMessage, lines: str) -> str:
    """``lines`` starting on a line of their own after the shown text."""
    space = lines[: len(lines) - len(lines.lstrip())]
    return "\n" + lines if shown.content and lines and "\n" not in space else lines


def _lines(blocks: Sequence[str]) -> str:
    """Blocks of marker lines one after the other, each starting on a line of its own."""
    out = ""
    for block in blocks:
        if not block:
            continue
        if out and not out.endswith("\n") and not block.startswith("\n"):
            out += "\n"
        out += block
    return out


def reply_key(message: AssistantMessage) -> tuple[object, ...]:
    """What identifies a reply as the client was shown it, however its API writes it back:
    its text and its calls (arguments compared as JSON)."""
    calls = tuple((c.id, c.name, _arguments(c.arguments)) for c in message.tool_calls)
    return (message.content or "", calls)


def _arguments(text: str) -> str:
    try:
        return json.dumps(json.loads(text), sort_keys=True)
    except ValueError:
        return text


class MarkerFilter:
    """The text deltas of one streamed text with its trailing marker block held back:
    :meth:`add` gives what can be sent now, :attr:`held` what is not sent yet.

    Whole replies are cut at once (:meth:`Markers.cut`); a streamed one passes through here,
    which holds back only the lines that may turn out to be the final marker block, at most a
    line or so, and any trailing space.
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

    @property
    def held(self) -> str:
        """What was added and not given back yet."""
        return self._text[self._sent :]
