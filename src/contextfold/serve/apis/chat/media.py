"""What an Anthropic, Responses or Gemini message holds beside its text, carried to a Chat
Completions upstream as far as its body can carry it (:func:`carried`): images as
``image_url`` parts (a tool result's in a user message after the results), ``is_error`` in
the tool message's text; media it has no part for is a 400 naming it, never dropped.
"""

from __future__ import annotations

from typing import Any

from contextfold.core.messages import Message, ToolCall, ToolMessage, UserMessage
from contextfold.core.wire.layout import fill, layout_of
from contextfold.serve.errors import ApiError

__all__ = ["after_results", "carried", "gemini_refused"]

_TEXTS = {"text", "input_text", "output_text"}
_IMAGES = {"image", "input_image"}
_MEDIA = {"document", "input_file", "input_audio", *_IMAGES}


def carried(message: Message, written: dict[str, Any], api: str) -> list[dict[str, Any]]:
    """``written`` (``message`` as a Chat Completions message) with what its layout for
    ``api`` holds that Chat Completions can carry; the image parts to send after the tool
    results (a tool message's).

    A user message's images (Anthropic ``image`` blocks inline or by URL, Responses
    ``input_image`` parts) become ``image_url`` parts beside its text, in the client's order;
    a tool result's images, which a Chat Completions tool message cannot hold, are returned
    to follow the run of results; ``is_error`` becomes ``[error] `` before the text. Media a
    Chat Completions body has no part for (a document, a file, audio, an image by file id) is
    a 400 naming it."""
    layout = layout_of(message, api)
    if layout is None or not isinstance(message, UserMessage | ToolMessage):
        return []
    filled = fill(layout, message.content, (), _no_call)
    if api == "gemini":  # parts, not blocks: in the blocks' words
        filled = [_gemini_block(p) for p in filled if isinstance(p, dict)]
    if isinstance(message, ToolMessage):
        if any(isinstance(b, dict) and b.get("is_error") is True for b in filled):
            written["content"] = f"[error] {written.get('content') or ''}"
        return [_image(p) for p in _parts(filled) if p.get("type") in _MEDIA]
    parts = _parts(filled)
    if any(p.get("type") in _MEDIA for p in parts):
        content = [_part(p) for p in parts if p.get("type") in _MEDIA or p.get("text")]
        written["content"] = content
    return []


def gemini_refused(part: dict[str, Any]) -> str | None:
    """What a Gemini client's ``part`` holds that a Chat Completions body cannot carry, in
    Gemini's words (None: it can), so the client is told at the edge, naming the part."""
    block = _gemini_block(part)
    if block["type"] == "document":
        return f"an inlineData part of type {block['source']['media_type'] or 'unknown'!r}"
    return "a fileData part" if block["type"] == "input_file" else None


def _gemini_block(part: dict[str, Any]) -> dict[str, Any]:
    """A Gemini part as a block: its text, an image, or media a Chat Completions body cannot
    carry (a document, a file by URI); nothing for any other part."""
    data = part.get("inlineData")
    if isinstance(data, dict):
        mime = str(data.get("mimeType", ""))
        standard = str(data.get("data", "")).replace("-", "+").replace("_", "/")
        source = {"type": "base64", "media_type": mime, "data": standard}
        return {"type": "image" if mime.startswith("image/") else "document", "source": source}
    if "fileData" in part:
        return {"type": "input_file"}
    if isinstance(part.get("text"), str) and not part.get("thought"):
        return {"type": "text", "text": part["text"]}
    return {"type": "other"}


def after_results(call_ids: list[str], images: list[dict[str, Any]]) -> dict[str, Any]:
    """The user message carrying the images of the tool results just before it."""
    note = f"[the images of the results of {', '.join(call_ids)}]"
    return {"role": "user", "content": [{"type": "text", "text": note}, *images]}


def _parts(node: Any) -> list[dict[str, Any]]:
    """The text and media parts of a filled layout, in order (inside tool results and
    message items too)."""
    out: list[dict[str, Any]] = []
    for item in node if isinstance(node, list) else [node]:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind in _TEXTS or kind in _MEDIA:
            out.append(item)
        elif kind in ("tool_result", "message") or kind.endswith("_output"):
            out += _parts(item.get("content", item.get("output")))
    return out


def _part(part: dict[str, Any]) -> dict[str, Any]:
    if part.get("type") in _TEXTS:
        return {"type": "text", "text": part.get("text", "")}
    return _image(part)


def _image(part: dict[str, Any]) -> dict[str, Any]:
    """An image as an ``image_url`` part; a 400 for media Chat Completions cannot carry."""
    kind = part.get("type")
    url = _url(part) if kind in _IMAGES else None
    if url is None:
        raise ApiError(
            400,
            f"a {kind} block cannot be sent to a Chat Completions upstream (its body has no "
            "part for it); send it to an upstream of the client's own API, inline an image as "
            "base64 or a URL, or leave it out",
            code="unsupported_content",
        )
    image: dict[str, Any] = {"url": url}
    if isinstance(part.get("detail"), str):
        image["detail"] = part["detail"]
    return {"type": "image_url", "image_url": image}


def _url(part: dict[str, Any]) -> str | None:
    if part.get("type") == "input_image":
        url = part.get("image_url")
        return url if isinstance(url, str) and url else None
    source = part.get("source")
    if not isinstance(source, dict):
        return None
    if source.get("type") == "base64":
        return f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
    url = source.get("url") if source.get("type") == "url" else None
    return url if isinstance(url, str) and url else None


def _no_call(call: ToolCall, extra: dict[str, Any]) -> dict[str, Any]:
    raise AssertionError("a user or tool message holds no calls")
