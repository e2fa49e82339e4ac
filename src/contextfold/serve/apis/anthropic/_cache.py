"""Cache breakpoints of a view sent to Anthropic: the client's where they still apply, and the
proxy's own at the end of the part of the view the strategy keeps as it is.

Anthropic caches a prompt's prefix only at a block marked ``cache_control``; the proxy sends the
strategy's view rather than the prompt the client marked, so it carries the marks over
(:func:`place_breakpoints`) and the view's settled part is read from the cache at every call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from contextfold.core.messages import Message, ToolMessage
from contextfold.core.view import Provenance
from contextfold.core.wire.anthropic import Marker
from contextfold.serve.apis.anthropic._write import Written

__all__ = ["MAX_BREAKPOINTS", "Marker", "Marks", "place_breakpoints"]

MAX_BREAKPOINTS = 4


@dataclass(slots=True)
class Marks:
    """The client's ``cache_control`` markers: on system blocks (by index), on messages (by
    where the message is in the conversation: step and place in it), and how many on tools."""

    system: list[Marker] = field(default_factory=list)
    steps: dict[tuple[int, int | str], list[Marker]] = field(default_factory=dict)
    """By step, then 0 for its first message or the call id a result answers."""
    tools: int = 0
    read: dict[int, list[Marker]] = field(default_factory=dict)
    """While reading: the markers of each message read (by its id), until :meth:`locate`."""

    @property
    def any(self) -> bool:
        return bool(self.system or self.steps or self.tools)

    def locate(self, steps: Sequence[Sequence[Message]]) -> None:
        """Key the markers of the messages read by their place in the grouped ``steps``."""
        for i, step in enumerate(steps):
            for message in step:
                if id(message) in self.read:
                    at = message.tool_call_id if isinstance(message, ToolMessage) else 0
                    self.steps[(i, at)] = self.read[id(message)]
        self.read = {}

    def style(self) -> dict[str, Any]:
        """The marker the proxy places its own with: the client's last one's (its TTL)."""
        if self.steps:
            latest = max(self.steps, key=lambda at: at[0])
            return dict(self.steps[latest][-1][1])
        return dict(self.system[-1][1]) if self.system else {"type": "ephemeral"}


Place = tuple[int, int]
"""(message, block) of a written view; message -1 is the system parameter."""


def place_breakpoints(
    written: Written,
    messages: Sequence[Message],
    provenance: Sequence[Provenance],
    settled: tuple[int | None, int | None],
    marks: Marks,
) -> int:
    """Mark ``written`` (``messages`` as Anthropic parameters, the view's ``provenance``;
    ``settled``: how many leading messages this view keeps as they are, and how many an
    earlier call of the session cached) in place; returns the marks set.

    Anthropic caches a prompt's prefix only at a block marked ``cache_control`` (at most four
    per request), and reads a cached prefix only through such a mark (at it, or up to about 20
    blocks before it). A client marks its own prompt (Claude Code: its system prompt and its
    latest turns); the proxy sends the strategy's view instead, so it puts each of the client's
    marks back on the message of the view that renders the marked message (by provenance: the
    same step, the same call answered; relabelled or not), and adds one of its own on the last
    block of the view's settled part (:attr:`~contextfold.core.view.View.settled`: for refold,
    everything before its boundary), so that part is written to the cache once and read from it
    at every call until the strategy next rewrites it. And one where an earlier call's cache
    ends that this view still holds
    (:meth:`~contextfold.serve.sessions.turns.Branch.cached_through`):
    when the strategy rewrites part of its view (refold advancing) more than 20 blocks after
    that, no other mark would read it. Over the limit, the proxy's settled mark is kept first,
    then the client's last one, the earlier cache's, and the client's others from the last one
    back. A client that marks nothing gets no mark.
    """
    if not marks.any:
        return 0
    client = _client_marks(written, messages, provenance, marks)
    now, cached = settled
    own = _settled_place(written, now)
    earlier = _settled_place(written, cached)
    chosen: dict[Place, dict[str, Any]] = {}
    room = MAX_BREAKPOINTS - marks.tools
    order = sorted(client, reverse=True)
    for place in [own, *order[:1], earlier, *order[1:]]:
        if len(chosen) >= room:
            break
        if place is not None:
            chosen.setdefault(place, client.get(place, marks.style()))
    for place, marker in chosen.items():
        _mark(written, place, marker)
    return len(chosen)


def _client_marks(
    written: Written, messages: Sequence[Message], provenance: Sequence[Provenance], marks: Marks
) -> dict[Place, dict[str, Any]]:
    out: dict[Place, dict[str, Any]] = {}
    for v, (message, prov) in enumerate(zip(messages, provenance, strict=False)):
        places = written.places[v]
        if not places:
            continue
        if places[0][0] == -1:
            found: Sequence[Marker] = marks.system
        elif len(prov.steps) == 1:
            found = marks.steps.get((prov.steps[0], _place(message)), ())
        else:
            continue
        for j, marker in found:
            out[places[min(j, len(places) - 1)]] = marker
    return out


def _place(message: Message) -> int | str:
    """Where a view message stands in the step it renders: its head (0), or the result of
    its call (matched by the call's id, whatever the order)."""
    return message.tool_call_id if isinstance(message, ToolMessage) else 0


def _settled_place(written: Written, settled: int | None) -> Place | None:
    """The last block of the view's settled part (None when it says nothing, or holds no
    block)."""
    if not settled:
        return None
    for v in range(min(settled, len(written.places)) - 1, -1, -1):
        if written.places[v]:
            return written.places[v][-1]
    return None


def _mark(written: Written, place: Place, marker: dict[str, Any]) -> None:
    message, block = place
    if message == -1:
        if isinstance(written.system, str):
            written.system = [{"type": "text", "text": written.system}]
        assert written.system is not None
        written.system[block]["cache_control"] = marker
        return
    written.messages[message]["content"][block]["cache_control"] = marker
