"""A GenerateContentResponse as Gemini streams it: ``streamGenerateContent``'s two framings.

The stream is a sequence of whole ``GenerateContentResponse`` chunks, each holding the next
parts of the one candidate (text in pieces; a function call whole, as the API sends it; a thought
signature on the last piece of its part); every chunk reports the prompt's tokens, and the last
one carries the ``finishReason`` and the whole ``usageMetadata``. With ``?alt=sse`` each chunk
is a server-sent event of one ``data:`` line; without it the chunks are the elements of one
JSON array, written as they come.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

__all__ = ["PIECE", "json_array", "sse", "stream_chunks"]

PIECE = 16
"""Characters of text per streamed chunk."""


def _pieces(part: dict[str, Any]) -> list[dict[str, Any]]:
    if "text" not in part:
        return [part]
    value = str(part["text"])
    texts = [value[i : i + PIECE] for i in range(0, len(value), PIECE)] or [""]
    out = [{**part, "text": t} for t in texts]
    for piece in out[:-1]:
        piece.pop("thoughtSignature", None)
    return out


def stream_chunks(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The chunks that ``response`` (one candidate) is streamed as."""
    candidate = response["candidates"][0]
    pieces = [p for part in candidate["content"]["parts"] for p in _pieces(part)]
    usage = response["usageMetadata"]
    early = {k: usage[k] for k in ("promptTokenCount", "promptTokensDetails") if k in usage}
    early["totalTokenCount"] = usage["promptTokenCount"]
    head = {"modelVersion": response["modelVersion"], "responseId": response["responseId"]}
    chunks = []
    for piece in pieces or [{"text": ""}]:
        content = {"parts": [piece], "role": "model"}
        chunks.append(
            {"candidates": [{"content": content, "index": 0}], "usageMetadata": early, **head}
        )
    last = copy.deepcopy(chunks[-1])
    last["candidates"][0]["finishReason"] = candidate["finishReason"]
    last["usageMetadata"] = usage
    return [*chunks[:-1], last]


def _cut(chunks: list[dict[str, Any]], error: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The chunks, or with ``error`` the first one and then the error (a failure mid-stream)."""
    return chunks if error is None else [chunks[0], error]


def sse(chunks: list[dict[str, Any]], error: dict[str, Any] | None = None) -> Iterator[bytes]:
    """``?alt=sse``: each chunk a ``data:`` event (CRLF framed, as the API writes it)."""
    for chunk in _cut(chunks, error):
        yield f"data: {json.dumps(chunk)}\r\n\r\n".encode()


def json_array(
    chunks: list[dict[str, Any]], error: dict[str, Any] | None = None
) -> Iterator[bytes]:
    """The default framing: one JSON array whose elements (indented) arrive one by one."""
    for i, chunk in enumerate(_cut(chunks, error)):
        yield ("[" if i == 0 else ",\r\n").encode() + json.dumps(chunk, indent=2).encode()
    yield b"]"
