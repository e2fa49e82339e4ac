"""What the proxy reads of an OpenAI Responses upstream's replies: the response object, whole,
and each event of its stream (:func:`check_response`, :func:`check_event`; see
:mod:`~contextfold.serve.edge.shapes`). The output items themselves are read (and checked) by
:mod:`._read`."""

from __future__ import annotations

from typing import Any

from contextfold.serve.edge.shapes import Count, Shape, check

__all__ = ["check_event", "check_response"]


class _InputDetails(Shape):
    cached_tokens: Count | None = None


class _OutputDetails(Shape):
    reasoning_tokens: Count | None = None


class _Usage(Shape):
    input_tokens: Count | None = None
    output_tokens: Count | None = None
    input_tokens_details: _InputDetails | None = None
    output_tokens_details: _OutputDetails | None = None


class _Incomplete(Shape):
    reason: str | None = None


class _Failure(Shape):
    message: str | None = None
    code: str | int | None = None
    type: str | None = None


class _Item(Shape):
    type: str | None = None


class _Response(Shape):
    id: str | None = None
    status: str | None = None
    output: list[_Item] | None = None
    usage: _Usage | None = None
    incomplete_details: _Incomplete | None = None
    error: _Failure | None = None


class _Begun(Shape):
    response: dict[str, Any]


class _Ended(Shape):
    response: _Response


class _TextDelta(Shape):
    delta: str


class _ItemEvent(Shape):
    item: _Item


_EVENTS: dict[str, type[Shape]] = {
    "response.created": _Begun,
    "response.in_progress": _Begun,
    "response.output_text.delta": _TextDelta,
    "response.output_item.added": _ItemEvent,
    "response.output_item.done": _ItemEvent,
    "response.completed": _Ended,
    "response.incomplete": _Ended,
    "response.failed": _Ended,
}
"""The events whose data the proxy reads (the others pass it nothing it reads)."""


def check_response(data: Any, where: str) -> None:
    """Raise a 502 unless a whole reply has the shape of a response object."""
    check(_Response, data, where, "answered a response")


def check_event(kind: str, data: Any, where: str) -> None:
    """Raise a 502 unless a streamed event of type ``kind`` has its shape."""
    shape = _EVENTS.get(kind)
    if shape is not None:
        check(shape, data, where, f"streamed a {kind} event")
