"""What every importer produces: :class:`Trajectory`, a recorded session split into steps, with
what the log recorded of each model call (:class:`RecordedCall`) where it recorded it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from contextfold.core.billing import BilledUsage
from contextfold.core.history import History, Step, make_step
from contextfold.core.messages import Message, SystemMessage
from contextfold.core.tokens import TokenCounter

__all__ = ["RecordedCall", "Trajectory"]


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """What a log recorded of the model call behind one assistant step: facts, never estimates."""

    usage: BilledUsage | None
    """The usage the provider reported (and billed) for the call; None when not recorded."""
    at: float | None
    """When it was made, in seconds since the epoch (a prefix cache's entries expire)."""
    model: str | None
    """The model that answered."""
    output_final: bool = True
    """Whether ``usage.output_tokens`` is the final count. Claude Code 2.0 logs a streamed
    reply with the count its stream started with (1, or a few), and the final one only on a
    line that has the reply's ``stop_reason``: then this is False and the count a lower bound."""


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
    model: str | None = None
    """The model the session names (the one most of its calls name), where the log says."""
    calls: tuple[RecordedCall, ...] = ()
    """One per assistant step, in order, where the log records its calls; else empty."""
    bills_conversation: bool = True
    """Whether ``calls`` billed the conversation as recorded (not so for a store's session
    served folded: its calls billed the strategy's views)."""

    def counted_steps(self, counter: TokenCounter) -> list[Step]:
        """The steps with token counts and hashes (count once, share across strategies)."""
        return [make_step(i, msgs, counter) for i, msgs in enumerate(self.steps)]

    def to_history(self, counter: TokenCounter) -> History:
        history = History(self.system, counter=counter)
        for step in self.counted_steps(counter):
            history.append_step(step)
        return history
