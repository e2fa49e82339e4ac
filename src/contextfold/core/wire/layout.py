"""A client's layout of one message, kept as a part so the message is written back as it came.

Strategies see a message's text and calls only; what its kind cannot say (how the text was
split into blocks, a thinking block, an image, an item's id) travels beside it as a template
(:func:`layout_part`), which :func:`fill` fills with the text the strategy left. The
template's notation is never the client's (:func:`template_of`), so whatever keys a client's
JSON holds reach the upstream as it sent them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from contextfold.core.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.core.parts import Part

__all__ = [
    "TEXT_KEYS",
    "fill",
    "layout_of",
    "layout_part",
    "message_of",
    "placed_calls",
    "raw",
    "template_of",
    "text_pieces",
    "with_pieces",
]

TEXT_KEYS = ("text", "content", "output")
"""Keys whose string value may be a text place (an int in a template)."""

BuildCall = Callable[[ToolCall, dict[str, Any]], dict[str, Any]]
"""The API's block for one call, given the template's other keys of it."""


def raw(value: Any) -> dict[str, Any]:
    """A client's block (or any value) kept whole in a template."""
    return {"$raw": value}


def template_of(
    client: dict[str, Any], *taken: str, call: int | None = None, **texts: Any
) -> dict[str, Any]:
    """A client's object in a template, its keys in their order: those ``taken`` (the ones the
    message holds apart: a call's id) left out, each text key in ``texts`` holding its place
    (a length, or the template of a list), the others escaped and inert; with ``call``, the
    place of the message's call of that index."""
    out: dict[str, Any] = {}
    for key, value in client.items():
        if key in texts:
            out[key] = texts[key]
        elif key not in taken:
            out[_escape(key)] = _inert(key, value)
    for key, value in texts.items():
        out.setdefault(key, value)
    if call is not None:
        out["$call"] = call
    return out


def _escape(key: str) -> str:
    return f"${key}" if key.startswith("$") else key


def _unescape(key: str) -> str:
    return key[1:] if key.startswith("$$") else key


def _inert(key: str, value: Any) -> Any:
    """``value`` as a template holds it: as it is when the template walk cannot read it (a
    string, a number that is no text place, an empty array), else kept under ``$raw``."""
    if isinstance(value, dict | list) and value:
        return raw(value)
    if key in TEXT_KEYS and isinstance(value, int) and not isinstance(value, bool):
        return raw(value)
    return value


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def layout_part(
    api: str, template: Any, text: str, *, shown: str = "", tokens: int = 0, **more: Any
) -> Part:
    """The layout part of a message whose text is ``text``: ``shown`` is what its kept
    blocks add to the message's text, ``tokens`` what they add beyond it (images); ``more``
    are the API's own notes (where a client message began).

    The API edges (:mod:`~contextfold.serve.apis.anthropic._read`,
    :mod:`~contextfold.serve.apis.responses._read`) read each message's blocks (or items) into one
    of the four message kinds: its text joined into ``content``, its calls into ``tool_calls``, and
    everything else kept. What the message kind cannot say (how the text was split into blocks, a
    thinking block, an image, an item's id) is its *template*: the client's own JSON with each text
    replaced by its length (an int where the API has a string: ``{"type": "text", "text": 12}``),
    each call by ``{"$call": k}`` beside the call's other keys, and each block kept whole (a
    thinking block, an image) as ``{"$raw": block}``. A message whose template is the canonical one
    (one text block, then its calls) carries none.
    """
    value = {"t": template, "h": _digest(text), **more}
    return Part.of(f"{api}:layout", value, text=shown, tokens=tokens)


def layout_of(message: Message, api: str) -> dict[str, Any] | None:
    """The layout a message carries for ``api`` (None: write it the canonical way)."""
    for part in message.parts:
        if part.kind == f"{api}:layout":
            value = part.value()
            return value if isinstance(value, dict) else None
    return None


def fill(layout: dict[str, Any], text: str, calls: Sequence[ToolCall], build: BuildCall) -> Any:
    """The layout's template with the message's text and calls put in; a call the template has
    no place for is left to the caller, and a place for a call the message no longer has
    becomes None.

    The text goes into the template's places: split as before when the text still starts with
    the text the template was made from (anything the strategy appended goes to the last
    place), else the whole text in the first place and the others empty (a stubbed or
    relabelled result: its images stay, its text is the strategy's).
    """
    template = layout["t"]
    pieces = _pieces(text, _places(template), str(layout.get("h", "")))
    return _put(template, iter(pieces), calls, build)


def _places(template: Any) -> list[int]:
    out: list[int] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict) and "$raw" not in node:
            for key, value in node.items():
                if key in TEXT_KEYS and isinstance(value, int) and not isinstance(value, bool):
                    out.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(template)
    return out


def _pieces(text: str, places: list[int], digest: str) -> list[str]:
    if not places:
        return []
    total = sum(places)
    if len(text) >= total and _digest(text[:total]) == digest:
        pieces, start = [], 0
        for n in places:
            pieces.append(text[start : start + n])
            start += n
        pieces[-1] += text[total:]
        return pieces
    return [text] + [""] * (len(places) - 1)


def _put(node: Any, pieces: Any, calls: Sequence[ToolCall], build: BuildCall) -> Any:
    if isinstance(node, list):
        return [_put(item, pieces, calls, build) for item in node]
    if not isinstance(node, dict):
        return node
    if "$raw" in node:
        return node["$raw"]
    out = {}
    for key, value in node.items():
        if key == "$call":
            continue
        if key in TEXT_KEYS and isinstance(value, int) and not isinstance(value, bool):
            out[key] = next(pieces)
        else:
            out[_unescape(key)] = _put(value, pieces, calls, build)
    if "$call" in node:  # the call's other keys (a text place among them) are its extra
        k = node["$call"]
        return build(calls[k], out) if isinstance(k, int) and k < len(calls) else None
    return out


def placed_calls(template: Any) -> int:
    """How many calls a template has places for."""
    count = 0

    def walk(node: Any) -> None:
        nonlocal count
        if isinstance(node, dict) and "$raw" not in node:
            count += "$call" in node
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(template)
    return count


def text_pieces(message: Message) -> list[str] | None:
    """The message's text split as its layout's text places split it (anything appended in
    the last piece), or None: no layout with a text place, or a text the layout no longer
    fits (then :func:`fill` puts it all in the first place)."""
    found = _layout_part(message)
    if found is None:
        return None
    layout = found.value()
    places = _places(layout.get("t"))
    text, total = message.content or "", sum(places)
    if not places or len(text) < total or _digest(text[:total]) != layout.get("h"):
        return None
    return _pieces(text, places, str(layout["h"]))


def with_pieces(message: Message, pieces: Sequence[str]) -> Message:
    """``message`` with text ``"".join(pieces)``, its layout's text places resized to the
    pieces (one each, as :func:`text_pieces` gave them), so each piece is written back in its
    own block."""
    found = _layout_part(message)
    text = "".join(pieces)
    if found is None:
        return replace(message, content=text)
    layout = found.value()
    sizes = iter(len(p) for p in pieces)
    template = _resized(layout["t"], sizes)
    value = {**layout, "t": template, "h": _digest(text)}
    part = Part.of(found.kind, value, text=found.text, tokens=found.tokens)
    parts = tuple(part if p is found else p for p in message.parts)
    return replace(message, content=text, parts=parts)


def _layout_part(message: Message) -> Part | None:
    return next((p for p in message.parts if p.kind.endswith(":layout")), None)


def _resized(node: Any, sizes: Any) -> Any:
    """``node`` with each text place (in :func:`_places`' order) the next of ``sizes``."""
    if isinstance(node, list):
        return [_resized(item, sizes) for item in node]
    if not isinstance(node, dict) or "$raw" in node:
        return node
    out = {}
    for key, value in node.items():
        if key in TEXT_KEYS and isinstance(value, int) and not isinstance(value, bool):
            out[key] = next(sizes)
        else:
            out[key] = _resized(value, sizes)
    return out


def message_of(
    kind: str, text: str, calls: Sequence[ToolCall], call_id: str, parts: tuple[Part, ...]
) -> Message:
    """A message a reader put together: an assistant's (its ``calls``), a tool's result (to
    ``call_id``) or a user's, with its layout ``parts``."""
    if kind == "assistant":
        return AssistantMessage(text, tool_calls=tuple(calls), parts=parts)
    if kind == "tool":
        return ToolMessage(text, call_id, parts=parts)
    return UserMessage(text, parts=parts)
