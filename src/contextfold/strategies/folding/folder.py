"""The folder: the model a strategy folds with, asked for structured output it cannot corrupt.

A reply is one validated JSON object or nothing (with the reason), never a half-parsed summary,
and an input that does not fit the folder's context is folded in chunks, never cut.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from contextfold.core.folds import FoldCall
from contextfold.core.messages import AssistantMessage, Message, SystemMessage, UserMessage
from contextfold.core.protocols import Completion, Model, Usage
from contextfold.core.tokens import ApproxCounter, TokenCounter
from contextfold.strategies.folding.cache import CachedReply, FoldCache

__all__ = ["ASK_REFUSALS", "FOLDER_ERROR", "INVALID_OUTPUT", "Answer", "Folder"]

M = TypeVar("M", bound=BaseModel)

_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$")
_OVERHEAD = 64
"""Tokens kept free for the chat template around the instruction and the input."""

FOLDER_ERROR = "folder error: "
"""How :attr:`Answer.reason` begins when the folder model raised."""
INVALID_OUTPUT = "invalid output"
"""How :attr:`Answer.reason` begins when the reply did not parse or validate, repaired or not
(``invalid output: ...``, ``invalid output after repair: ...``)."""
ASK_REFUSALS = (FOLDER_ERROR, INVALID_OUTPUT)
"""How every reason :meth:`Folder.ask` gives begins."""


@dataclass(slots=True)
class Answer(Generic[M]):
    """What one :meth:`Folder.ask` gave: the value (None when refused), the raw reply, why it
    was refused, and the usage of every call it took."""

    value: M | None
    raw: str = ""
    reason: str | None = None
    calls: list[FoldCall] = field(default_factory=list)


class Folder:
    """A model used for folding, with its context size, a token counter and an optional cache.

    :meth:`ask` sends one instruction and one input and wants back one JSON object of a pydantic
    schema, sent as ``response_schema`` (a grammar in the embedded engine, ``response_format`` on
    servers that support it); the reply is parsed and validated; one that fails gets one repair
    round (the error is shown and the object asked for again); one that still fails, or a model
    that raises, gives an :class:`Answer` with no value and the reason. Nothing is retried beyond
    that and nothing raises: the strategy records the rejection and its view stays as it was.
    :meth:`chunks` packs an input's blocks (one per step) into chunks that fit with room for the
    instruction and the reply, splitting a block that alone is too long at line (or character)
    boundaries; the strategy folds the chunks in turn, each with the previous result.
    """

    def __init__(
        self,
        model: Model,
        *,
        context_tokens: int = 8192,
        counter: TokenCounter | None = None,
        cache: FoldCache | None = None,
        name: str | None = None,
    ) -> None:
        self.model = model
        self.name = name or model.name
        self.context_tokens = context_tokens
        self.counter: TokenCounter = counter or ApproxCounter()
        self.cache = cache

    # -- asking ----------------------------------------------------------------------------
    def ask(self, instruction: str, text: str, schema: type[M], *, max_tokens: int) -> Answer[M]:
        """One structured answer to ``instruction`` about ``text`` (one repair round)."""
        json_schema = schema.model_json_schema()
        messages: list[Message] = [SystemMessage(instruction), UserMessage(text)]
        answer: Answer[M] = Answer(None)
        for attempt in range(2):
            try:
                completion, call = self._call(messages, json_schema, max_tokens)
            except Exception as exc:  # a folder that fails is a rejected fold, never a crash
                answer.reason = f"{FOLDER_ERROR}{type(exc).__name__}: {exc}"
                return answer
            answer.calls.append(call)
            answer.raw = completion.message.content or ""
            answer.value, problem = _parse(answer.raw, schema)
            if answer.value is not None:
                answer.reason = None
                return answer
            answer.reason = f"{INVALID_OUTPUT}{' after repair' if attempt else ''}: {problem}"
            messages += [AssistantMessage(answer.raw or "(empty)"), UserMessage(_repair(problem))]
        return answer

    def _call(
        self, messages: list[Message], schema: dict[str, Any], max_tokens: int
    ) -> tuple[Completion, FoldCall]:
        key = FoldCache.key(self.name, messages, schema, max_tokens) if self.cache else ""
        cached = self.cache.get(key) if self.cache else None
        if cached is not None:
            usage = cached.usage
            call = FoldCall(
                int(usage.get("prompt_tokens", 0)),
                int(usage.get("cached_tokens", 0)),
                int(usage.get("completion_tokens", 0)),
                cached.ms,
                cache_hit=True,
            )
            return Completion(AssistantMessage(cached.text), Usage()), call
        start = time.perf_counter()
        completion = self.model.complete(messages, max_tokens=max_tokens, response_schema=schema)
        ms = (time.perf_counter() - start) * 1000
        u = completion.usage
        call = FoldCall(u.prompt_tokens, u.cached_tokens, u.completion_tokens, ms)
        if self.cache is not None:
            usage = {"prompt_tokens": u.prompt_tokens, "cached_tokens": u.cached_tokens}
            usage["completion_tokens"] = u.completion_tokens
            self.cache.put(key, self.name, CachedReply(completion.message.content or "", usage, ms))
        return completion, call

    # -- fitting the context ---------------------------------------------------------------
    def room(self, instruction: str, *, max_tokens: int, reserved: str = "") -> int:
        """Tokens left for the input next to ``instruction``, the reply and ``reserved`` text
        (a previous summary that goes with every chunk)."""
        fixed = self.counter.count_batch([instruction, reserved])
        return self.context_tokens - max_tokens - sum(fixed) - _OVERHEAD

    def chunks(self, blocks: Sequence[str], room: int) -> list[str]:
        """The blocks packed in order into chunks of at most ``room`` tokens (estimated with
        a 10% margin); a block too long alone is split at lines, or characters, not cut."""
        limit = max(int(room * 0.9), 16)
        pieces = [p for block in blocks for p in self._split(block, limit)]
        counts = self.counter.count_batch([text for text, _ in pieces]) if pieces else []
        out: list[str] = []
        current, used = "", 0
        for (text, joiner), n in zip(pieces, counts, strict=True):
            if current and used + n > limit:
                out.append(current)
                current, used = "", 0
            current = current + joiner + text if current else text
            used += n
        if current:
            out.append(current)
        return out

    def _split(self, block: str, limit: int) -> list[tuple[str, str]]:
        """(piece, what joins it to the one before): lines join with a newline, the parts of
        a line split by characters with nothing."""
        if self.counter.count_batch([block])[0] <= limit:
            return [(block, "\n")]
        lines = block.splitlines()
        if len(lines) > 1:
            return [p for line in lines for p in self._split(line, limit)]
        size = max(limit * 2, 32)  # characters: at least 2 per token, usually more
        parts = [block[i : i + size] for i in range(0, len(block), size)]
        return [(part, "\n" if k == 0 else "") for k, part in enumerate(parts)]


def _parse(raw: str, schema: type[M]) -> tuple[M | None, str]:
    """The reply as ``schema``, or None and what is wrong with it."""
    text = _FENCE.sub("", raw.strip())
    start, end = text.find("{"), text.rfind("}")
    if start < 0:
        return None, "the reply holds no JSON object"
    candidate = text[start : end + 1] if end > start else text[start:]  # cut off: say so
    try:
        data = json.loads(candidate, strict=False)
    except json.JSONDecodeError as exc:
        return None, f"the reply is not valid JSON ({exc.msg} at character {exc.pos})"
    try:
        return schema.model_validate(data), ""
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the object"
        return None, f"{where}: {first['msg']} ({exc.error_count()} error(s))"


def _repair(problem: str) -> str:
    return (
        f"That reply cannot be used: {problem}. Reply again with only the JSON object, "
        "following the schema exactly."
    )
