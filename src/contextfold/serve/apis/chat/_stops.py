"""Chat Completions' words for why a reply ended: its ``finish_reason`` (the table:
``docs/serve/errors.md``). Its four words are the kinds themselves
(:data:`~contextfold.serve.exchange.STOP_KINDS`); any other a Chat upstream sends (a local
server's own) comes back to a Chat client as it came and is ``stop`` to the rest."""

from __future__ import annotations

from typing import Any

from contextfold.serve.exchange import Stop

__all__ = ["from_chat", "to_chat"]

_KINDS = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
    "function_call": "tool_calls",  # the legacy word: the proxy writes tool_calls
}


def from_chat(reason: Any) -> Stop | None:
    """A ``finish_reason`` (None when it gave none)."""
    if not isinstance(reason, str):
        return None
    kind = _KINDS.get(reason)
    return Stop(kind) if kind is not None else Stop("stop", "chat", reason)


def to_chat(stop: Stop) -> str:
    """The ``finish_reason`` a Chat Completions client gets."""
    return stop.own("chat") or stop.kind
