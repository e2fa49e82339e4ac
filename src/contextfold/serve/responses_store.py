"""The responses the proxy served, so a Responses client may send only its new input.

A client that sends ``previous_response_id`` continues from a response the proxy gave it
earlier: its whole input is that response's (and, through it, every earlier one's) input and
output, then the new input, as OpenAI defines it (instructions do not carry over). Each
response is kept with its own new input and output only (the chain is walked to rebuild the
rest), in memory, the latest :data:`DEFAULT_LIMIT`; one not kept (``store: false``, forgotten,
or from before a restart) is a 404 in OpenAI's shape.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from contextfold.serve.errors import ApiError

__all__ = ["DEFAULT_LIMIT", "ResponseStore", "Stored"]

DEFAULT_LIMIT = 10_000


@dataclass(frozen=True, slots=True)
class Stored:
    """One response served: what it continued, its own new input, the response object."""

    previous: str | None
    input: list[dict[str, Any]]
    response: dict[str, Any]


class ResponseStore:
    """Responses by id (thread-safe), the latest ``limit`` kept."""

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self.limit = limit
        self._kept: OrderedDict[str, Stored] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, stored: Stored) -> None:
        with self._lock:
            self._kept[str(stored.response["id"])] = stored
            while len(self._kept) > self.limit:
                self._kept.popitem(last=False)

    def get(self, response_id: str) -> Stored:
        with self._lock:
            stored = self._kept.get(response_id)
        if stored is None:
            raise ApiError(
                404,
                f"Previous response with id '{response_id}' not found (this proxy keeps the "
                "responses it served with store left on, in memory, until it restarts)",
                param="previous_response_id",
                code="previous_response_not_found",
            )
        return stored

    def delete(self, response_id: str) -> bool:
        with self._lock:
            return self._kept.pop(response_id, None) is not None

    def items(self, response_id: str) -> list[dict[str, Any]]:
        """The whole input through ``response_id``: every earlier input and output, in order."""
        chain: list[Stored] = []
        current: str | None = response_id
        while current is not None:
            stored = self.get(current)
            chain.append(stored)
            current = stored.previous
        out: list[dict[str, Any]] = []
        for stored in reversed(chain):
            out += stored.input
            out += stored.response.get("output") or []
        return out
