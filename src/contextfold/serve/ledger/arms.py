"""A control group on live traffic (``serve --control SHARE``): which sessions the proxy leaves
unfolded, served as ``full`` would serve them, so ``contextfold savings --compare`` can set the
treated sessions beside them on the user's own agents.

The arm is drawn once, when a session is created, from a hash of its unit (the session family
the client names, else the session's own id), and kept in its metadata: the same conversation
is in the same arm on every replica and after a restart, a branch keeps its parent's arm, and
a session stored before there was a control group stays treated.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from contextfold.core.ledger import Arm
from contextfold.core.protocols import Strategy

__all__ = ["CONTROL_STRATEGY", "Arms", "arm_of", "draw", "unit_of"]

CONTROL_STRATEGY = "full"
"""How a control session is served: everything, append-only, no tool of the strategy's."""


def draw(unit: str, share: float) -> Arm:
    """``control`` for a stable ``share`` of units, chosen by a hash of ``unit`` (uniform in
    [0, 1): the same unit always draws the same)."""
    digest = hashlib.blake2b(unit.encode("utf-8", "replace"), digest_size=8, person=b"cf-arm")
    point = int.from_bytes(digest.digest(), "big") / 2**64
    return "control" if point < share else "treated"


def arm_of(meta: Mapping[str, Any]) -> Arm:
    """A stored session's arm (``treated`` when its metadata names none)."""
    serve = meta.get("serve")
    arm = serve.get("arm") if isinstance(serve, Mapping) else None
    return "control" if arm == "control" else "treated"


def unit_of(meta: Mapping[str, Any], session_id: str) -> str:
    """What a stored session's arm was drawn for (its own id when its metadata names none)."""
    serve = meta.get("serve")
    unit = serve.get("unit") if isinstance(serve, Mapping) else None
    return unit if isinstance(unit, str) and unit else session_id


@dataclass(frozen=True, slots=True)
class Arms:
    """The share of sessions left unfolded, and how each arm's strategy is built."""

    treated: Callable[[], Strategy]
    """The proxy's strategy (``--strategy``)."""
    control: Callable[[], Strategy]
    """The control arm's (:data:`CONTROL_STRATEGY`)."""
    share: float = 0.0

    def label(
        self, session_id: str, family: str, parent: Mapping[str, Any] | None
    ) -> dict[str, str]:
        """The ``arm`` and ``unit`` of a new session, for its ``serve`` metadata: a branch's
        are its parent's (``parent``: that session's metadata); any other's arm is drawn for
        its family, or its own id when it has none."""
        if parent is not None:
            return {"arm": arm_of(parent), "unit": unit_of(parent, session_id)}
        unit = family or session_id
        return {"arm": draw(unit, self.share), "unit": unit}

    def factory(self, meta: Mapping[str, Any]) -> Callable[[], Strategy]:
        """How the strategy of a session with this metadata is built (its arm's)."""
        return self.control if arm_of(meta) == "control" else self.treated
