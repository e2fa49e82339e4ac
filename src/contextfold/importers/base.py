"""What every importer produces: :class:`Trajectory`, a recorded session split into steps."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from contextfold.core.history import History, Step, make_step
from contextfold.core.messages import Message, SystemMessage
from contextfold.core.tokens import TokenCounter

__all__ = ["Trajectory"]


@dataclass(frozen=True, slots=True)
class Trajectory:
    """One recorded session in contextfold's terms.

    ``steps`` holds the messages of each step in the shape :func:`make_step` accepts: one user
    message, or one assistant message followed by the tool results answering its calls.
    """

    id: str
    source: str
    """The file it came from (and, for multi-trajectory files, nothing else: see ``meta``)."""
    system: SystemMessage | None
    steps: tuple[tuple[Message, ...], ...]
    outcome: float | None = None
    """Task outcome where the recording has one (tau2 reward, SWE-bench resolved as 1.0/0.0)."""
    meta: Mapping[str, Any] = field(default_factory=dict)

    def counted_steps(self, counter: TokenCounter) -> list[Step]:
        """The steps with token counts and hashes (count once, share across strategies)."""
        return [make_step(i, msgs, counter) for i, msgs in enumerate(self.steps)]

    def to_history(self, counter: TokenCounter) -> History:
        history = History(self.system, counter=counter)
        for step in self.counted_steps(counter):
            history.append_step(step)
        return history
