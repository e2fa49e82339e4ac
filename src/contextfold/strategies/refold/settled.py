"""The settled prefix of a refold view, extended incrementally at each boundary advance.

An advance re-uses the tuples of the previous prefix up to the first step whose rendering
changed, and flattens only the steps after it, so the work of an advance is proportional to what
it changes, not to the session's length.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import accumulate, chain

from contextfold.core.messages import Message
from contextfold.core.view import Elision, Provenance, ViewBuilder
from contextfold.strategies.refold.entries import Entry

__all__ = ["Settled"]


@dataclass(frozen=True, slots=True)
class Settled:
    """The system message and the rendered steps before ``boundary``, flattened for the view;
    refold's note, when it has one, opens the block of step ``note_at``."""

    boundary: int
    head: tuple[Entry, ...]
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
    """Tokens this prefix shares with the one it replaced (head plus unchanged steps)."""
    note: Entry | None = None
    note_at: int = 0

    @classmethod
    def start(cls, head: tuple[Entry, ...]) -> Settled:
        total = sum(e[1] for e in head)
        return cls(
            0,
            head,
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

    def with_note(self, note: Entry, at: int) -> Settled:
        """This (empty) prefix, to be extended with ``note`` before the step ``at``."""
        assert self.boundary == 0
        return replace(self, note=note, note_at=at)

    def extend(self, steps: Sequence[ViewBuilder], boundary: int, first_change: int) -> Settled:
        """The prefix settling ``steps[:boundary]``; steps before ``first_change`` are reused."""
        keep = min(first_change, self.boundary)
        pos = self.starts[keep] if keep < self.boundary else len(self.messages)
        epos = self.elision_starts[keep] if keep < self.boundary else len(self.elisions)
        new = [self._block(i, b) for i, b in enumerate(steps[keep:boundary], keep)]
        new_tokens = tuple(sum(b.tokens) for b in new)
        sizes = [len(b.messages) for b in new]
        esizes = [len(b.elisions) for b in new]
        step_tokens = self.step_tokens[:keep] + new_tokens
        kept = sum(e[1] for e in self.head) + sum(self.step_tokens[:keep])
        return Settled(
            boundary,
            self.head,
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
            self.note,
            self.note_at,
        )

    def _block(self, index: int, block: ViewBuilder) -> ViewBuilder:
        if self.note is None or index != self.note_at:
            return block
        out = ViewBuilder()
        out.add(*self.note)
        for entry in zip(block.messages, block.tokens, block.provenance, strict=True):
            out.add(*entry)
        out.elisions = block.elisions
        return out
