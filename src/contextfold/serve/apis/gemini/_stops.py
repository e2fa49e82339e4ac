"""Gemini's words for why a reply ended: a candidate's ``finishReason`` (the table:
``docs/serve/errors.md``), and a prompt the upstream blocked (:func:`blocked`). A Gemini
upstream's reason comes back to a Gemini client as it came (``RECITATION``, ``SPII``); the
other APIs' clients get its kind in their words."""

from __future__ import annotations

from typing import Any

from contextfold.serve.exchange import Stop

__all__ = ["blocked", "from_gemini", "to_gemini"]

_FILTERS = ("SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY",
            "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "MODEL_ARMOR")  # fmt: skip
_KINDS = {"STOP": "stop", "MAX_TOKENS": "length"} | dict.fromkeys(_FILTERS, "content_filter")
"""Every other reason (``MALFORMED_FUNCTION_CALL``, ``OTHER``, ``LANGUAGE``, ...) is ``stop``:
the reply ended with what it holds."""
_WORDS = {"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS",
          "content_filter": "SAFETY"}  # fmt: skip
_BLOCKS = frozenset(_FILTERS) | {"OTHER"}
"""The ``blockReason`` s that are finish reasons too (a blocked prompt's finishReason)."""


def from_gemini(reason: Any, has_calls: bool) -> Stop | None:
    """A ``finishReason`` (Gemini ends a turn of calls with ``STOP``); None when it gave
    none."""
    if not isinstance(reason, str):
        return None
    kind = _KINDS.get(reason, "stop")
    if kind == "stop" and has_calls:
        kind = "tool_calls"
    return Stop(kind, "gemini", reason)


def blocked(feedback: dict[str, Any]) -> Stop:
    """A prompt the upstream blocked (``promptFeedback.blockReason``, no candidates): a
    content filter; a Gemini client gets the block's reason as the ``finishReason`` (``OTHER``
    for one that is no finish reason) and the ``promptFeedback``."""
    reason = feedback.get("blockReason")
    word = reason if reason in _BLOCKS else "OTHER"
    return Stop("content_filter", "gemini", word, {"promptFeedback": feedback})


def to_gemini(stop: Stop) -> str:
    """The ``finishReason`` a Gemini client gets."""
    return stop.own("gemini") or _WORDS[stop.kind]
