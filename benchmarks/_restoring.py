"""The restores a recorded call needs through the proxy, by replay's rule.

What benchmarks/protocol_cost.py ``--restores`` has the via route's scripted model do before
each recorded turn: look at the view the proxy just sent (the proxy runs in-process, so its
session's latest view is at hand), find the values the recorded call uses that the view left
out but a stub can give back (:class:`~contextfold.bench.availability.ArgTally`), and call
``restore`` on the stubs that give them back in the fewest characters
(:func:`~contextfold.bench.restores.choose_restores`), as ``contextfold replay`` prices them.
The proxy answers those calls itself and calls the model again, which then gives the
recorded turn.
"""

from __future__ import annotations

import json
from typing import Any

from contextfold.bench.availability import ArgIndex, ArgTally
from contextfold.bench.restores import choose_restores
from contextfold.core.counters import resolve_counter
from contextfold.importers.base import Trajectory

__all__ = ["Restorer"]


class Restorer:
    """One trajectory at a time: :meth:`start` it, then :meth:`reply` before each call."""

    def __init__(self, manager: Any, api: str) -> None:
        self.manager = manager
        """The in-process proxy's :class:`~contextfold.serve.sessions.sessions.SessionManager`."""
        self.api = api
        self.counter = resolve_counter("approx")
        self.calls = 0
        """Restore calls made."""
        self.tally: ArgTally | None = None
        self.family = ""

    def start(self, traj: Trajectory, family: str) -> None:
        steps = traj.counted_steps(self.counter)
        self.tally = ArgTally(ArgIndex.build(traj.system, steps))
        self.family = family

    def reply(self, step: int) -> Any:
        """The scripted model's first reply to the call before recorded step ``step``: its
        restore calls (None: nothing to restore)."""
        session = self._session()
        if session is None or session.view is None or self.tally is None:
            return None
        wanted = self.tally.check(step, session.view).restorable
        pieces = choose_restores(wanted, session.view, session.history) if wanted else []
        if not pieces:
            return None
        self.calls += len(pieces)
        calls = [
            (f"restore_{step}_{k}", p.path.tool, p.path.as_dict()) for k, p in enumerate(pieces)
        ]
        return [_call(self.api, *c) for c in calls]

    def _session(self) -> Any:
        """The session of the family in flight (the one the proxy is extending; the
        manager's private table of them, this being a benchmark of the proxy in-process)."""
        growing = [s for s in self.manager._growing.values() if s.family == self.family]
        return max(growing, key=lambda s: len(s.history), default=None)


def _call(api: str, call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    if api == "messages":
        return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
    raw = json.dumps(arguments)
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": raw}
