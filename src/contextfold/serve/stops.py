"""Why a reply ended, read from each upstream API and written in each client API.

A :class:`~contextfold.serve.exchange.Reply` says it in no API's words: ``stop``,
``tool_calls``, ``length``, ``content_filter``, or an upstream's own reason the others have
no word for (Anthropic's ``stop_sequence``, ``pause_turn``, ``model_context_window_exceeded``),
which a client of its API gets back as it was. Each direction is one function here (the
table: ``docs/serve/errors.md``).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "from_anthropic",
    "from_chat",
    "from_responses",
    "to_anthropic",
    "to_chat",
    "to_responses",
]

_ANTHROPIC = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}
_TO_ANTHROPIC = {v: k for k, v in _ANTHROPIC.items()}
_ANTHROPIC_OWN = {"stop_sequence", "pause_turn", "model_context_window_exceeded"}
_TO_CHAT = {
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "model_context_window_exceeded": "length",
}
_INCOMPLETE = {
    "length": "max_output_tokens",
    "content_filter": "content_filter",
    "model_context_window_exceeded": "max_output_tokens",
}


def from_anthropic(reason: Any) -> str | None:
    """Anthropic's ``stop_reason`` in no API's words (None when it gave none)."""
    if not isinstance(reason, str):
        return None
    return _ANTHROPIC.get(reason, reason)


def from_chat(reason: Any) -> str | None:
    """A Chat Completions ``finish_reason`` (the API's words are the neutral ones; the legacy
    ``function_call`` is ``tool_calls``)."""
    if not isinstance(reason, str):
        return None
    return "tool_calls" if reason == "function_call" else reason


def from_responses(status: Any, incomplete: Any, has_calls: bool) -> str:
    """A response's ``status`` and ``incomplete_details.reason``: ``incomplete`` for its
    content filter is ``content_filter``, for any other reason (``max_output_tokens``, the one
    other OpenAI documents) ``length``."""
    if status == "incomplete":
        return "content_filter" if incomplete == "content_filter" else "length"
    return "tool_calls" if has_calls else "stop"


def to_anthropic(stop: str) -> str:
    """The ``stop_reason`` an Anthropic client gets (``end_turn`` for a reason it has no
    word for)."""
    if stop in _ANTHROPIC_OWN:
        return stop
    return _TO_ANTHROPIC.get(stop, "end_turn")


def to_chat(stop: str) -> str:
    """The ``finish_reason`` a Chat Completions client gets (a Chat upstream's own, as it
    came)."""
    return _TO_CHAT.get(stop, stop)


def to_responses(stop: str | None) -> tuple[str, dict[str, str] | None]:
    """The ``status`` and ``incomplete_details`` a Responses client gets (None: the response
    is still in progress)."""
    if stop is None:
        return "in_progress", None
    reason = _INCOMPLETE.get(stop)
    return ("incomplete", {"reason": reason}) if reason else ("completed", None)
