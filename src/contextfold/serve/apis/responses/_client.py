"""The answer an OpenAI Responses client gets: a ``response`` object, or its event stream.

Both are in OpenAI's own shapes and event sequence (:class:`ResponsesStream`), so the openai
SDK and Codex read them unchanged; each answer is kept for ``previous_response_id``
(:mod:`._store`) unless the client said ``store: false``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from contextfold.core.messages import AssistantMessage, ToolCall
from contextfold.serve.apis.responses._errors import responses_error
from contextfold.serve.apis.responses._request import ResponsesRequest
from contextfold.serve.apis.responses._stops import to_responses
from contextfold.serve.apis.responses._write import assistant_items, call_item
from contextfold.serve.edge.streaming import sse
from contextfold.serve.errors import ApiError
from contextfold.serve.exchange import Delta, Reply, Stop

__all__ = ["ResponsesStream", "ResponsesWriter"]

_ECHOED = (
    "instructions",
    "max_output_tokens",
    "metadata",
    "parallel_tool_calls",
    "previous_response_id",
    "reasoning",
    "temperature",
    "text",
    "tool_choice",
    "tools",
    "top_p",
    "truncation",
    "user",
)
_PREFIX = {"message": "msg", "function_call": "fc", "custom_tool_call": "ctc", "reasoning": "rs"}


def responses_usage(usage: dict[str, int]) -> dict[str, Any]:
    prompt, completion = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": usage.get("cached_tokens", 0)},
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + completion,
    }


def _with_id(item: dict[str, Any]) -> dict[str, Any]:
    if "id" in item:
        return item
    prefix = _PREFIX.get(str(item.get("type")), "item")
    return {"id": f"{prefix}_{uuid.uuid4().hex[:24]}", **item}


Keep = Callable[[dict[str, Any]], None]
"""Keeps a finished response (for ``previous_response_id``)."""


class ResponsesWriter:
    """Responses answers to ``request``; each finished response is given to ``keep``."""

    def __init__(self, request: ResponsesRequest, keep: Keep) -> None:
        self.request = request
        self.keep = keep
        self.id = f"resp_{uuid.uuid4().hex[:24]}"
        self.created = int(time.time())

    def respond(
        self, final: AssistantMessage, stop: Stop, usage: dict[str, int], last: Reply
    ) -> dict[str, Any]:
        items = [_with_id(i) for i in assistant_items(final, self.request.call_kinds)]
        for item in items:
            if item.get("type") != "reasoning":
                item.setdefault("status", "completed")
        response = self.response(items, stop, usage)
        self.keep(response)
        return response

    def response(
        self, output: list[dict[str, Any]], stop: Stop | None, usage: dict[str, int] | None
    ) -> dict[str, Any]:
        """The response object (``stop`` None: still in progress)."""
        body = self.request.body
        status, incomplete = to_responses(stop)
        out: dict[str, Any] = {
            "id": self.id,
            "object": "response",
            "created_at": self.created,
            "status": status,
            "model": body["model"],
            "output": output,
            "error": None,
            "incomplete_details": incomplete,
            "store": body.get("store", True) is not False,
            "usage": responses_usage(usage) if usage is not None else None,
        }
        out.update({k: body[k] for k in _ECHOED if k in body})
        out.setdefault("tools", [])
        return out

    def stream(self) -> ResponsesStream:
        return ResponsesStream(self)


class ResponsesStream:
    """The events of one streamed response (one response across every round).

    The events are OpenAI's: ``response.created``, ``response.in_progress``; the text as a
    ``message`` item (``response.output_item.added``, ``response.content_part.added``,
    ``response.output_text.delta``, ``...done``); other items of the upstream's own API
    (reasoning) whole as they finish; a ``message`` item for each of the upstream's; the
    client's calls in place once the last round has ended
    (``response.function_call_arguments.delta`` or ``response.custom_tool_call_input.delta``);
    then ``response.completed`` (or ``response.incomplete``: :mod:`._stops`) with
    the whole response.
    """

    def __init__(self, writer: ResponsesWriter) -> None:
        self.writer = writer
        self.output: list[dict[str, Any]] = []
        self._seq = 0
        self._text: dict[str, Any] | None = None  # the message item being streamed
        self._text_at = 0

    def start(self) -> list[bytes]:
        response = self.writer.response([], None, None)
        return [
            self._event("response.created", response=response),
            self._event("response.in_progress", response=response),
        ]

    def delta(self, delta: Delta) -> list[bytes]:
        kind, value = delta
        if kind == "text":
            events = [] if self._text is not None else self._open_text()
            assert self._text is not None
            self._text["content"][0]["text"] += value
            return [*events, self._event("response.output_text.delta", **self._at(), delta=value)]
        if kind == "block" and isinstance(value, dict):
            item = _with_id(value)
            events = self._close_text()
            index = len(self.output)
            self.output.append(item)
            events.append(self._event("response.output_item.added", output_index=index, item=item))
            events.append(self._event("response.output_item.done", output_index=index, item=item))
            return events
        if kind == "call" and isinstance(value, ToolCall):
            return [*self._close_text(), *self._call(value)]
        if kind == "break":
            return self._close_text()
        return []

    def end(self, final: AssistantMessage, stop: Stop, usage: dict[str, int]) -> list[bytes]:
        events = self._close_text()
        for call in final.tool_calls:
            events += self._call(call)
        response = self.writer.response(self.output, stop, usage)
        self.writer.keep(response)
        events.append(self._event(f"response.{response['status']}", response=response))
        return events

    def error(self, exc: ApiError) -> bytes:
        """An ``error`` event, then ``response.failed`` carrying the error's code (what Codex
        reads: ``server_is_overloaded``, ``rate_limit_exceeded``, ...)."""
        error = responses_error(exc)[1]["error"]
        code, message = error["code"] or error["type"], error["message"]
        failed = self.writer.response(self.output, None, None)
        failed.update(status="failed", error={"code": code, "message": message})
        event = self._event("error", code=code, message=message, param=exc.param)
        return event + self._event("response.failed", response=failed)

    def _open_text(self) -> list[bytes]:
        part = {"type": "output_text", "text": "", "annotations": []}
        item = _with_id({"type": "message", "status": "in_progress", "role": "assistant"})
        self._text = {**item, "content": [part]}
        index = self._text_at = len(self.output)
        self.output.append(self._text)
        added = {**self._text, "content": []}
        return [
            self._event("response.output_item.added", output_index=index, item=added),
            self._event("response.content_part.added", **self._at(), part=dict(part)),
        ]

    def _close_text(self) -> list[bytes]:
        item, self._text = self._text, None
        if item is None:
            return []
        at = {"item_id": item["id"], "output_index": self._text_at, "content_index": 0}
        part = item["content"][0]
        item["status"] = "completed"
        return [
            self._event("response.output_text.done", **at, text=part["text"]),
            self._event("response.content_part.done", **at, part=part),
            self._event("response.output_item.done", output_index=at["output_index"], item=item),
        ]

    def _call(self, call: ToolCall) -> list[bytes]:
        item = _with_id(call_item(call, self.writer.request.call_kinds))
        key = "input" if item["type"] == "custom_tool_call" else "arguments"
        kind = "custom_tool_call_input" if key == "input" else "function_call_arguments"
        index = len(self.output)
        self.output.append({**item, "status": "completed"})
        at = {"item_id": item["id"], "output_index": index}
        started = {**item, key: "", "status": "in_progress"}
        return [
            self._event("response.output_item.added", output_index=index, item=started),
            self._event(f"response.{kind}.delta", **at, delta=item.get(key, "")),
            self._event(f"response.{kind}.done", **at, **{key: item.get(key, "")}),
            self._event("response.output_item.done", output_index=index, item=self.output[index]),
        ]

    def _at(self) -> dict[str, Any]:
        assert self._text is not None
        return {"item_id": self._text["id"], "output_index": self._text_at, "content_index": 0}

    def _event(self, kind: str, **data: Any) -> bytes:
        event = {"type": kind, "sequence_number": self._seq, **data}
        self._seq += 1
        return sse(event, kind)
