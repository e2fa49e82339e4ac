"""Media between a Gemini client or upstream and another API's. Another API's images and
documents for a Gemini upstream: the blocks an Anthropic or Responses client's message keeps
in its layout, as ``inlineData`` parts (media given by URL or file id, which Gemini cannot
fetch so, is a 400 naming it, never dropped). A Gemini client's media that a Chat Completions
upstream cannot carry is a 400 naming its part (:func:`check_for_chat`)."""

from __future__ import annotations

from typing import Any

from contextfold.core.messages import Message, ToolCall, ToolMessage, UserMessage
from contextfold.core.wire.layout import fill, layout_of
from contextfold.serve.apis.chat.media import gemini_refused
from contextfold.serve.apis.gemini._names import bad
from contextfold.serve.errors import ApiError

__all__ = ["check_for_chat", "foreign_media"]

_APIS = ("anthropic", "responses")
_HOLDERS = ("tool_result", "message", "function_call_output", "custom_tool_call_output")


def foreign_media(message: Message) -> list[dict[str, Any]]:
    """The media of a user or tool message another API's client sent, as Gemini parts."""
    if not isinstance(message, UserMessage | ToolMessage):
        return []
    for api in _APIS:
        layout = layout_of(message, api)
        if layout is not None:
            return [_inline(b) for b in _blocks(fill(layout, message.content, (), _no_call))]
    return []


def _blocks(node: Any) -> list[dict[str, Any]]:
    """The media blocks of a filled layout, in order (inside tool results and items too)."""
    out: list[dict[str, Any]] = []
    for item in node if isinstance(node, list) else [node]:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind in ("image", "document", "input_image", "input_file"):
            out.append(item)
        elif kind in _HOLDERS:
            out += _blocks(item.get("content", item.get("output")))
    return out


def _inline(block: dict[str, Any]) -> dict[str, Any]:
    source = block.get("source")
    if isinstance(source, dict) and source.get("type") == "base64":  # Anthropic's
        mime = source.get("media_type") or "application/octet-stream"
        return {"inlineData": {"mimeType": mime, "data": source.get("data", "")}}
    url = block.get("image_url", block.get("file_data"))  # Responses': a data URL
    if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
        mime, _, data = url[5:].partition(";base64,")
        return {"inlineData": {"mimeType": mime, "data": data}}
    raise ApiError(
        400,
        f"a {block.get('type')} block given by URL or file id cannot be sent to a Gemini "
        "upstream (it takes media inline); inline it as base64, send it to an upstream of the "
        "client's own API, or leave it out",
        code="unsupported_content",
    )


def _no_call(call: ToolCall, extra: dict[str, Any]) -> dict[str, Any]:
    raise AssertionError("a user or tool message holds no calls")


def check_for_chat(contents: list[dict[str, Any]]) -> None:
    """A 400 naming the first part of the user contents (read: checked) that a Chat
    Completions upstream cannot be sent (a PDF, a file by URI)."""
    for i, content in enumerate(contents):
        if content.get("role", "user") != "user":
            continue
        for j, part in enumerate(content["parts"]):
            held = gemini_refused(part)
            if held is not None:
                problem = (
                    f"{held} cannot be sent to a Chat Completions upstream (its body has no "
                    "part for it); send it to a Gemini upstream, or leave it out"
                )
                raise bad(f"contents[{i}].parts[{j}]", problem)
