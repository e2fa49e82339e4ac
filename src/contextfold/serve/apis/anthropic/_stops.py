"""Anthropic's words for why a reply ended: its ``stop_reason`` (the table:
``docs/serve/errors.md``); an Anthropic upstream's comes back to an Anthropic client as it
came."""

from __future__ import annotations

from typing import Any

from contextfold.serve.exchange import Stop

__all__ = ["from_anthropic", "to_anthropic"]

_KINDS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
_WORDS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens",
          "content_filter": "refusal"}  # fmt: skip


def from_anthropic(reason: Any) -> Stop | None:
    """A ``stop_reason`` (None when it gave none)."""
    if not isinstance(reason, str):
        return None
    return Stop(_KINDS.get(reason, "stop"), "anthropic", reason)


def to_anthropic(stop: Stop) -> str:
    """The ``stop_reason`` an Anthropic client gets."""
    return stop.own("anthropic") or _WORDS[stop.kind]
