"""A Responses object as OpenAI streams it: the event sequence of ``stream: true``.

``response.created`` and ``response.in_progress``; for each output item
``response.output_item.added``, its deltas (a message's content part and ``output_text``
deltas, a function call's ``function_call_arguments`` deltas, a custom tool call's
``custom_tool_call_input`` deltas, a reasoning item's summary part and
``reasoning_summary_text`` deltas), their ``.done`` events and ``response.output_item.done``;
then ``response.completed``. Every event carries its ``sequence_number``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

__all__ = ["stream_events"]

PIECE = 8
"""Characters of text (or of arguments) per streamed delta."""

Event = tuple[str, dict[str, Any]]


def _pieces(value: str) -> list[str]:
    return [value[i : i + PIECE] for i in range(0, len(value), PIECE)] or [""]


def stream_events(response: dict[str, Any], error: str | None = None) -> Iterator[Event]:
    """The events of ``response``; with ``error``, an ``error`` event (of that code) follows
    the first delta and ends the stream."""
    numbers = itertools.count()

    def event(kind: str, **data: Any) -> Event:
        return kind, {"type": kind, "sequence_number": next(numbers), **data}

    started = {**response, "status": "in_progress", "output": [], "usage": None}
    yield event("response.created", response=started)
    yield event("response.in_progress", response=started)
    for index, item in enumerate(response["output"]):
        for n, (kind, data) in enumerate(_item_events(item, index)):
            yield event(kind, **data)
            if error is not None and n == 1:
                yield event("error", code=error, message="The server had an error.", param=None)
                return
    yield event("response.completed", response=response)


def _item_events(item: dict[str, Any], index: int) -> Iterator[tuple[str, dict[str, Any]]]:
    at = {"item_id": item["id"], "output_index": index}
    kind = item["type"]
    if kind == "message":
        yield "response.output_item.added", _added(item, index, content=[])
        for c, part in enumerate(item["content"]):
            yield from _part(part, {**at, "content_index": c})
    elif kind == "reasoning":
        yield "response.output_item.added", _added(item, index, summary=[])
        for s, part in enumerate(item["summary"]):
            where = {**at, "summary_index": s}
            yield "response.reasoning_summary_part.added", {**where, "part": {**part, "text": ""}}
            for piece in _pieces(part["text"]):
                yield "response.reasoning_summary_text.delta", {**where, "delta": piece}
            yield "response.reasoning_summary_text.done", {**where, "text": part["text"]}
            yield "response.reasoning_summary_part.done", {**where, "part": part}
    elif kind in {"function_call", "custom_tool_call"}:
        field = "arguments" if kind == "function_call" else "input"
        name = "function_call_arguments" if kind == "function_call" else "custom_tool_call_input"
        yield "response.output_item.added", _added(item, index, **{field: ""})
        for piece in _pieces(item[field]):
            yield f"response.{name}.delta", {**at, "delta": piece}
        yield f"response.{name}.done", {**at, field: item[field]}
    else:
        yield "response.output_item.added", _added(item, index)
    yield "response.output_item.done", {"output_index": index, "item": item}


def _added(item: dict[str, Any], index: int, **empty: Any) -> dict[str, Any]:
    shown = {**item, **empty}
    if "status" in item:
        shown["status"] = "in_progress"
    return {"output_index": index, "item": shown}


def _part(part: dict[str, Any], at: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    yield "response.content_part.added", {**at, "part": {**part, "text": ""}}
    if part["type"] == "output_text":
        for piece in _pieces(part["text"]):
            yield "response.output_text.delta", {**at, "delta": piece, "logprobs": []}
        yield "response.output_text.done", {**at, "text": part["text"], "logprobs": []}
    yield "response.content_part.done", {**at, "part": part}
