"""The Responses API's words for why a reply ended: a response's ``status`` and
``incomplete_details.reason`` (the table: ``docs/serve/errors.md``); a Responses upstream's
reason comes back to a Responses client as it came."""

from __future__ import annotations

from typing import Any

from contextfold.serve.exchange import Stop

__all__ = ["from_responses", "to_responses"]

_REASONS = {"length": "max_output_tokens", "content_filter": "content_filter"}


def from_responses(status: Any, incomplete: Any, has_calls: bool) -> Stop:
    """A response's ``status`` and ``incomplete_details.reason``: ``incomplete`` for its
    content filter is ``content_filter``, for any other reason (``max_output_tokens``, the one
    other OpenAI documents) ``length``."""
    if status == "incomplete":
        kind = "content_filter" if incomplete == "content_filter" else "length"
        return Stop(kind, "responses", incomplete if isinstance(incomplete, str) else "")
    return Stop("tool_calls" if has_calls else "stop")


def to_responses(stop: Stop | None) -> tuple[str, dict[str, str] | None]:
    """The ``status`` and ``incomplete_details`` a Responses client gets (``stop`` None: the
    response is still in progress)."""
    if stop is None:
        return "in_progress", None
    reason = stop.own("responses") or _REASONS.get(stop.kind)
    return ("incomplete", {"reason": reason}) if reason else ("completed", None)
