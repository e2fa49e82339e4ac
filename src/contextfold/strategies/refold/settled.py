"""The settled prefix of a refold view, extended incrementally at each boundary advance.

An advance re-uses the tuples of the previous prefix up to the first step whose rendering
changed, and flattens only the steps after it, so the work of an advance is proportional to what
it changes, not to the session's length.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, chain

from contextfold.core.messages import Message
from contextfold.core.view import Elision, Provenance, ViewBuilder
from contextfold.strategies.refold.prefix import Entry

__all__ = ["Settled"]


@dataclass(frozen=True, slots=True)
class Settled:
    """System message and the rendered steps before ``boundary``, flattened for the view."""

    boundary: int
    system: Entry | None
    messages: tuple[Message, ...]
    tokens: tuple[int, ...]
    provenance: tuple[Provenance, ...]
    elisions: tuple[Elision, ...]
    step_tokens: tuple[int, ...]
    """Tokens of each settled step."""
    starts: tuple[int, ...]
    """Position in ``messages`` where each settled step begins."""
    elision_starts: tuple[int, ...]
    total: int
    shared: int
    """Tokens this prefix shares with the one it replaced (system plus unchanged steps)."""

    @classmethod
    def start(cls, system: Entry | None) -> Settled:
        head = (system,) if system else ()
        total = system[1] if system else 0
        return cls(
            0,
            system,
            tuple(e[0] for e in head),
            tuple(e[1] for e in head),
            tuple(e[2] for e in head),
            (),
            (),
            (),
            (),
            total,
            total,
        )

    def extend(self, steps: Sequence[ViewBuilder], boundary: int, first_change: int) -> Settled:
        """The prefix settling ``steps[:boundary]``; steps before ``first_change`` are reused."""
        keep = min(first_change, self.boundary)
        pos = self.starts[keep] if keep < self.boundary else len(self.messages)
        epos = self.elision_starts[keep] if keep < self.boundary else len(self.elisions)
        new = steps[keep:boundary]
        new_tokens = tuple(sum(b.tokens) for b in new)
        sizes = [len(b.messages) for b in new]
        esizes = [len(b.elisions) for b in new]
        step_tokens = self.step_tokens[:keep] + new_tokens
        system = self.system[1] if self.system else 0
        kept = system + sum(self.step_tokens[:keep])
        return Settled(
            boundary,
            self.system,
            self.messages[:pos] + tuple(chain.from_iterable(b.messages for b in new)),
            self.tokens[:pos] + tuple(chain.from_iterable(b.tokens for b in new)),
            self.provenance[:pos] + tuple(chain.from_iterable(b.provenance for b in new)),
            self.elisions[:epos] + tuple(chain.from_iterable(b.elisions for b in new)),
            step_tokens,
            self.starts[:keep] + tuple(accumulate([pos, *sizes[:-1]]))
            if new
            else self.starts[:keep],
            self.elision_starts[:keep] + tuple(accumulate([epos, *esizes[:-1]]))
            if new
            else self.elision_starts[:keep],
            kept + sum(new_tokens),
            kept,
        )
