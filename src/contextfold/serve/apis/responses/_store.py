"""The responses the proxy served, so a Responses client may send only its new input.

With ``previous_response_id`` the whole input is that response's (and, through it, every
earlier one's) input and output, then the new input, as OpenAI defines it. Each response is
kept with its own new input and output only, in memory, within a budget of bytes
(:class:`ResponseStore`); one not kept is a 404 in OpenAI's shape saying why.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from contextfold.serve.config import DEFAULT_RESPONSES_MEMORY
from contextfold.serve.errors import ApiError

__all__ = ["DEFAULT_BUDGET", "DEFAULT_LIMIT", "ResponseStore", "Stored", "stored_bytes"]

DEFAULT_BUDGET = DEFAULT_RESPONSES_MEMORY
"""Bytes of kept responses at most, by default (256 MiB)."""
DEFAULT_LIMIT = 10_000
"""Kept responses at most, however small."""
_FORGOTTEN = 4096
"""Ids of responses let go that the store remembers, to say why one is gone."""


@dataclass(frozen=True, slots=True)
class Stored:
    """One response served: what it continued, its own new input, the response object."""

    previous: str | None
    input: list[dict[str, Any]]
    response: dict[str, Any]


def stored_bytes(stored: Stored) -> int:
    """What keeping ``stored`` costs: the UTF-8 bytes of its input and response as JSON."""
    text = json.dumps([stored.input, stored.response], ensure_ascii=False, separators=(",", ":"))
    return len(text.encode("utf-8", "surrogatepass"))


class ResponseStore:
    """Responses by id (thread-safe), within ``budget`` bytes (``--responses-memory``,
    :data:`DEFAULT_BUDGET`; the JSON bytes of what is kept: :func:`stored_bytes`) and
    ``limit`` responses: the oldest go first when a new one would pass them, and one larger
    than the whole budget is not kept. One not kept (``store: false``, evicted, too large, or
    from before a restart) is a 404 saying which."""

    def __init__(self, budget: int = DEFAULT_BUDGET, limit: int = DEFAULT_LIMIT) -> None:
        if budget < 1 or limit < 1:
            raise ValueError(f"a response store needs a positive budget and limit: {budget}")
        self.budget = budget
        self.limit = limit
        self.bytes = 0
        """Bytes of the responses kept now (:func:`stored_bytes`), at most ``budget``."""
        self._kept: OrderedDict[str, tuple[Stored, int]] = OrderedDict()
        self._gone: OrderedDict[str, str] = OrderedDict()  # id -> why it is not kept
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._kept)

    def put(self, stored: Stored) -> None:
        """Keep ``stored``, evicting the oldest as needed; one over the whole budget is not
        kept (and nothing is evicted for it)."""
        size = stored_bytes(stored)
        response_id = str(stored.response["id"])
        with self._lock:
            self._drop(response_id)
            if size > self.budget:
                self._forget(response_id, f"at {size:,} bytes it was larger than the budget")
                return
            while self._kept and (self.bytes + size > self.budget or len(self) >= self.limit):
                oldest = next(iter(self._kept))
                self._drop(oldest)
                self._forget(oldest, "it was evicted, the oldest, to keep within the budget")
            self._kept[response_id] = (stored, size)
            self.bytes += size

    def get(self, response_id: str) -> Stored:
        with self._lock:
            kept = self._kept.get(response_id)
            why = self._gone.get(response_id)
        if kept is None:
            raise _not_found(response_id, why)
        return kept[0]

    def delete(self, response_id: str) -> bool:
        with self._lock:
            return self._drop(response_id)

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

    def _drop(self, response_id: str) -> bool:
        kept = self._kept.pop(response_id, None)
        if kept is None:
            return False
        self.bytes -= kept[1]
        return True

    def _forget(self, response_id: str, why: str) -> None:
        self._gone[response_id] = why
        while len(self._gone) > _FORGOTTEN:
            self._gone.popitem(last=False)


def _not_found(response_id: str, why: str | None) -> ApiError:
    reason = (
        f"this proxy did not keep it: {why} of kept responses (--responses-memory)"
        if why
        else "this proxy keeps the responses it served with store left on, in memory, within "
        "--responses-memory bytes, until it restarts"
    )
    return ApiError(
        404,
        f"Previous response with id '{response_id}' not found ({reason})",
        param="previous_response_id",
        code="previous_response_not_found",
    )
