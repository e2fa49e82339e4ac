"""The answer a Gemini client gets: a ``GenerateContentResponse``, or its stream.

Streamed, each chunk is a whole ``GenerateContentResponse`` holding the next parts: text (and
thoughts) as the upstream sends them; at the end, one chunk with what is not text (the
client's calls, kept parts such as code), a ``thoughtSignature`` its text carried (on an empty
text part, as Gemini sends it), the ``finishReason`` and the usage summed over every upstream
call. With ``?alt=sse`` each chunk is a ``data:`` event; without, the chunks are the elements
of one JSON array; a failure is a last chunk ``{"error": ...}``.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from typing import Any

from contextfold.core.messages import AssistantMessage, ToolCall
from contextfold.serve.apis.gemini._errors import gemini_error, gemini_usage
from contextfold.serve.apis.gemini._request import GeminiRequest
from contextfold.serve.apis.gemini._stops import to_gemini
from contextfold.serve.apis.gemini._wire import model_of
from contextfold.serve.apis.gemini._write import model_parts
from contextfold.serve.errors import ApiError
from contextfold.serve.exchange import Delta, Reply, Stop

__all__ = ["GeminiStream", "GeminiWriter"]


class GeminiWriter:
    """Gemini answers to ``request`` (streamed as server-sent events when ``sse``)."""

    def __init__(self, request: GeminiRequest, *, sse: bool = True) -> None:
        self.request = request
        self.sse = sse

    def respond(
        self, final: AssistantMessage, stop: Stop, usage: dict[str, int], last: Reply
    ) -> dict[str, Any]:
        raw = last.raw if last.raw is not None and "candidates" in last.raw else {}
        parts = model_parts(final, client=True) or [{"text": ""}]
        candidate = {"content": {"role": "model", "parts": parts},
                     "finishReason": to_gemini(stop), "index": 0}  # fmt: skip
        return {
            "candidates": [candidate],
            **stop.said_to("gemini"),
            "usageMetadata": gemini_usage(usage),
            "modelVersion": raw.get("modelVersion") or model_of(self.request.body),
            "responseId": raw.get("responseId") or _id(),
        }

    def stream(self) -> GeminiStream:
        return GeminiStream(self.request, sse=self.sse)


def _id() -> str:
    return uuid.uuid4().hex[:24]


class GeminiStream:
    """The chunks of one streamed answer (one response id across every round)."""

    def __init__(self, request: GeminiRequest, *, sse: bool) -> None:
        self.sse = sse
        self._head = {"modelVersion": model_of(request.body), "responseId": _id()}
        self._sent = 0
        self._calls: list[ToolCall] = []

    def start(self) -> list[bytes]:
        return [] if self.sse else [b"["]

    def delta(self, delta: Delta) -> list[bytes]:
        kind, value = delta
        if kind == "text" and value:
            return [self._chunk([{"text": value}])]
        if kind == "reasoning" and value:
            return [self._chunk([{"text": value, "thought": True}])]
        if kind == "call" and isinstance(value, ToolCall):
            self._calls.append(value)  # written at the end, with its signature
        return []

    def end(self, final: AssistantMessage, stop: Stop, usage: dict[str, int]) -> list[bytes]:
        whole = replace(final, tool_calls=(*self._calls, *final.tool_calls))
        parts = [_rest(p) for p in model_parts(whole, client=True)]
        kept = [p for p in parts if p is not None] or [{"text": ""}]
        more = {"finishReason": to_gemini(stop)}
        chunk = self._chunk(kept, more, usage=gemini_usage(usage), said=stop.said_to("gemini"))
        return [chunk, b"]"] if not self.sse else [chunk]

    def error(self, exc: ApiError) -> bytes:
        return self._frame(gemini_error(exc)[1]) + (b"" if self.sse else b"]")

    def _chunk(
        self,
        parts: list[dict[str, Any]],
        more: dict[str, Any] | None = None,
        usage: dict[str, int] | None = None,
        said: dict[str, Any] | None = None,
    ) -> bytes:
        candidate = {"content": {"role": "model", "parts": parts}, **(more or {}), "index": 0}
        data: dict[str, Any] = {"candidates": [candidate], **(said or {}), **self._head}
        if usage is not None:
            data["usageMetadata"] = usage
        return self._frame(data)

    def _frame(self, data: dict[str, Any]) -> bytes:
        text = json.dumps(data, ensure_ascii=False)
        if self.sse:
            return f"data: {text}\r\n\r\n".encode()
        self._sent += 1
        return (text if self._sent == 1 else ",\r\n" + text).encode()


def _rest(part: dict[str, Any]) -> dict[str, Any] | None:
    """What of a part the stream has not sent: all but its text (which went out), a
    signature alone on an empty text part, as Gemini sends it."""
    if "text" not in part:
        return part
    rest = {k: v for k, v in part.items() if k != "text"}
    if set(rest) <= {"thought"}:
        return None
    return rest if set(rest) - {"thought", "thoughtSignature"} else {"text": "", **rest}
