"""What the proxy reads of an Anthropic upstream's replies: the message, whole, and each
event of its stream (:func:`check_message`, :func:`check_event`; see
:mod:`~contextfold.serve.edge.shapes`). The content blocks themselves are read (and checked) by
:mod:`._read`."""

from __future__ import annotations

from typing import Any

from contextfold.serve.edge.shapes import Count, Index, Shape, check

__all__ = ["check_event", "check_message"]


class _Usage(Shape):
    input_tokens: Count | None = None
    output_tokens: Count | None = None
    cache_read_input_tokens: Count | None = None
    cache_creation_input_tokens: Count | None = None


class _Block(Shape):
    type: str


class _Message(Shape):
    id: str | None = None
    model: str | None = None
    content: list[_Block]
    stop_reason: str | None = None
    stop_sequence: str | None = None
    usage: _Usage | None = None


class _Started(Shape):
    id: str | None = None
    model: str | None = None
    usage: _Usage | None = None


class _MessageStart(Shape):
    message: _Started


class _BlockStart(Shape):
    index: Index
    content_block: _Block


class _Delta(Shape):
    type: str
    text: str | None = None
    thinking: str | None = None
    signature: str | None = None
    partial_json: str | None = None


class _BlockDelta(Shape):
    index: Index
    delta: _Delta


class _BlockStop(Shape):
    index: Index


class _Ending(Shape):
    stop_reason: str | None = None
    stop_sequence: str | None = None


class _MessageDelta(Shape):
    delta: _Ending
    usage: _Usage | None = None


_EVENTS: dict[str, type[Shape]] = {
    "message_start": _MessageStart,
    "content_block_start": _BlockStart,
    "content_block_delta": _BlockDelta,
    "content_block_stop": _BlockStop,
    "message_delta": _MessageDelta,
}
"""The events whose data the proxy reads (``ping``, ``message_stop`` and events it does not
know carry nothing it reads)."""


def check_message(data: Any, where: str) -> None:
    """Raise a 502 unless a whole reply has the shape of a message."""
    check(_Message, data, where, "answered a reply")


def check_event(kind: str, data: Any, where: str) -> None:
    """Raise a 502 unless a streamed event of type ``kind`` has its shape."""
    shape = _EVENTS.get(kind)
    if shape is not None:
        check(shape, data, where, f"streamed a {kind} event")
