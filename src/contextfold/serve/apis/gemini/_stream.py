"""A Gemini upstream's replies checked, and a streamed one put back together.

A stream (``?alt=sse``) is a sequence of whole ``GenerateContentResponse`` chunks, each
holding the next parts of the one candidate: text in pieces (a ``thoughtSignature`` on the last
piece of its part), a function call whole; the last chunk carries the ``finishReason`` and the
whole ``usageMetadata``. :class:`GeminiReader` passes text and thoughts on as they come and
joins the pieces of each part again, so the reply is the one a whole answer would have been.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contextfold.serve.apis.gemini._errors import read_usage
from contextfold.serve.apis.gemini._read import read_model
from contextfold.serve.apis.gemini._stops import blocked, from_gemini
from contextfold.serve.errors import ApiError, UpstreamError
from contextfold.serve.exchange import Delta, Reply, Stop

__all__ = ["GeminiReader", "check_response", "stop_of"]


def check_response(data: Any, where: str, what: str = "answered a reply") -> dict[str, Any]:
    """The first candidate of a ``GenerateContentResponse`` (a 502 unless it has one, or is
    a prompt the upstream blocked: then an empty candidate, :func:`stop_of` its reason)."""
    feedback = _feedback(data, where, what)
    candidates = data.get("candidates") if isinstance(data, dict) else None
    if candidates is None and _blocks(feedback):
        return {"content": {"parts": []}}
    if not isinstance(candidates, list) or not candidates or not isinstance(candidates[0], dict):
        raise UpstreamError(502, f"upstream {where} {what} without candidates: {data!r:.200}")
    content = candidates[0].get("content")
    if content is not None and not isinstance(content, dict):
        raise UpstreamError(502, f"upstream {where} {what} whose content is not an object")
    return candidates[0]


def _feedback(data: Any, where: str, what: str) -> dict[str, Any] | None:
    feedback = data.get("promptFeedback") if isinstance(data, dict) else None
    if feedback is not None and not isinstance(feedback, dict):
        text = f"upstream {where} {what} whose promptFeedback is not an object: {feedback!r:.200}"
        raise UpstreamError(502, text)
    return feedback


def _blocks(feedback: dict[str, Any] | None) -> bool:
    return feedback is not None and isinstance(feedback.get("blockReason"), str)


def stop_of(data: dict[str, Any], candidate: dict[str, Any], has_calls: bool) -> Stop | None:
    """Why the reply of ``data`` (checked: :func:`check_response`) ended: its candidate's
    ``finishReason``, or the block of a prompt the upstream refused."""
    feedback = data.get("promptFeedback")
    if "candidates" not in data and isinstance(feedback, dict) and _blocks(feedback):
        return blocked(feedback)
    return from_gemini(candidate.get("finishReason"), has_calls)


def _joins(last: dict[str, Any], part: dict[str, Any]) -> bool:
    """Whether ``part`` is the next piece of the text part ``last`` (a signature ends one;
    a part that holds a call too is whole)."""
    return (
        isinstance(last.get("text"), str)
        and bool(last.get("thought")) == bool(part.get("thought"))
        and "thoughtSignature" not in last
        and "functionCall" not in last
        and "functionCall" not in part
    )


@dataclass(slots=True)
class GeminiReader:
    """One streamed reply from the upstream named ``where``, put back together."""

    where: str
    parts: list[dict[str, Any]] = field(default_factory=list)
    finish: str | None = None
    block: Stop | None = None
    """A prompt the upstream blocked (it streams the block, and no candidate)."""
    usage: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)

    def add(self, event: str, data: dict[str, Any]) -> list[Delta]:
        if "usageMetadata" in data:
            self.usage = data["usageMetadata"] or {}
        self.raw = {k: v for k, v in data.items() if k in ("modelVersion", "responseId")}
        candidates = data.get("candidates")
        blocks = _blocks(_feedback(data, self.where, "streamed a chunk"))
        if not candidates and "usageMetadata" in data and not blocks:
            return []  # a chunk of usage only
        candidate = check_response(data, self.where, "streamed a chunk")
        if blocks and "candidates" not in data:
            self.block = stop_of(data, candidate, False)
        self.finish = candidate.get("finishReason") or self.finish
        out: list[Delta] = []
        for part in (candidate.get("content") or {}).get("parts") or ():
            if isinstance(part, dict):
                out += self._part(part)
        return out

    def _part(self, part: dict[str, Any]) -> list[Delta]:
        text = part.get("text")
        call: list[Delta] = [("call", None)] if "functionCall" in part else []  # sent at the end
        if not isinstance(text, str):
            self.parts.append(dict(part))
            return call
        last = self.parts[-1] if self.parts else None
        if last is not None and _joins(last, part):
            last.update({**part, "text": last["text"] + text})
        else:
            self.parts.append(dict(part))
        kind = "reasoning" if part.get("thought") else "text"
        return ([(kind, text)] if text else []) + call

    def reply(self) -> Reply:
        if self.finish is None and self.block is None:
            problem = f"upstream {self.where} ended its stream without a finishReason"
            raise UpstreamError(502, problem)
        try:
            message = read_model(self.parts, "content.parts")
        except ApiError as exc:
            text = f"upstream {self.where} streamed a reply whose {exc.message}"
            raise UpstreamError(502, text) from exc
        stop = self.block or from_gemini(self.finish, bool(message.tool_calls))
        content = {"role": "model", "parts": self.parts}
        raw = {"candidates": [{"content": content, "finishReason": self.finish}], **self.raw}
        return Reply(message, read_usage(self.usage), stop, {**raw, "usageMetadata": self.usage})
