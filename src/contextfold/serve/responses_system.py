"""A Responses conversation's system prompt sent as its first input item, not as
``instructions`` (LangChain's ``ChatOpenAI`` on the Responses API sends it so).

Read as one more user message, such an item would be the session's first step, taken by the
strategies for the task. So a leading ``system`` or ``developer`` message of plain text is the
system prompt when the request has no ``instructions``, and it is written back as it came, in
its place (a strategy that changes the prompt gets the same role and its new text).
"""

from __future__ import annotations

from typing import Any

__all__ = ["leading_system", "system_item", "system_text"]

_KEYS = frozenset({"type", "role", "content"})


def leading_system(items: Any) -> dict[str, Any] | None:
    """The first of ``items`` when it is a system or developer message of plain text."""
    if not isinstance(items, list) or not items or not isinstance(items[0], dict):
        return None
    item = items[0]
    if item.get("type", "message") != "message" or item.get("role") not in ("system", "developer"):
        return None
    if set(item) - _KEYS:
        return None  # an id, a status or more: not a plain prompt
    return item if system_text(item) else None


def system_text(item: dict[str, Any]) -> str | None:
    """The text of a system item: its string content, or its ``input_text`` parts joined
    (None: any other part, or no text)."""
    content = item.get("content")
    if isinstance(content, str):
        return content or None
    if not isinstance(content, list) or not content:
        return None
    plain = all(
        isinstance(p, dict)
        and p.get("type") == "input_text"
        and set(p) <= {"type", "text"}
        and isinstance(p.get("text"), str)
        for p in content
    )
    return "".join(p["text"] for p in content) or None if plain else None


def system_item(item: dict[str, Any], text: str) -> dict[str, Any]:
    """The item to write for a view whose system prompt is ``text``: ``item`` as it came when
    the text is its own, else the same role with ``text``."""
    return item if system_text(item) == text else {**item, "content": text}
