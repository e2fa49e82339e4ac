"""The settled rendering of each step refold has rendered, kept up to date as the history grows.

A step's settled rendering (fold, supersede, mask, dedup: :class:`~.prefix.PrefixRenderer`) does
not depend on where the boundary is, so it is made once and kept. A step is rendered again when
something later changes it (a call that re-runs its call, a STALE marker, a reach-back that makes
refold keep it, an upstream view that differs), or when a step it pointed at is no longer shown
in full. The steps whose rendering changed since they were settled are the pending changes the
boundary (:mod:`.boundary`) weighs apart (they rewrite more of the cached prompt).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from contextfold.core.messages import ToolMessage
from contextfold.core.view import ViewBuilder
from contextfold.strategies.refold.entries import Entries, Entry
from contextfold.strategies.refold.prefix import PrefixRenderer

__all__ = ["Renderings"]


class Renderings:
    """The settled rendering of steps ``0 .. len(steps)``, each with what it was rendered from."""

    def __init__(self, renderer: PrefixRenderer) -> None:
        self.renderer = renderer
        self.steps: list[ViewBuilder] = []
        self.changed: set[int] = set()
        """Steps whose rendering changed since they were settled."""
        self._sources: list[Sequence[Entry]] = []
        self._dirty: set[int] = set()  # rendered steps whose rendering is out of date

    def mark(self, step: int) -> None:
        """``step``'s rendering is out of date (if it was rendered)."""
        if step < len(self.steps):
            self._dirty.add(step)

    def compare(self, groups: Mapping[int, Sequence[Entry]]) -> None:
        """Mark the steps an upstream view now gives otherwise than they were rendered from."""
        for i, source in enumerate(self._sources):
            if tuple(groups.get(i, ())) != tuple(source):
                self._dirty.add(i)

    def settle(self, before: int | None) -> None:
        """An advance settled the prefix: the pending changes it applied are no longer
        pending (all of them, or those at or after ``before``, the old boundary, when it
        settled only new steps)."""
        self.changed = set() if before is None else {c for c in self.changed if c < before}

    def threshold(self, min_mask: int, boundary: int) -> None:
        """Mask only outputs of ``min_mask`` tokens or more from now on: the steps rendered
        but not settled yet (from ``boundary``) that hold an output the change concerns are
        rendered again (the settled ones stay as they are)."""
        old, self.renderer.min_mask = self.renderer.min_mask, min_mask
        if old == min_mask:
            return
        low, high = sorted((old, min_mask))
        for step in range(boundary, len(self.steps)):
            sizes = (t for m, t, _ in self._sources[step] if isinstance(m, ToolMessage))
            if any(low <= t < high for t in sizes):
                self._dirty.add(step)

    def update(self, target: int, entries: Entries, *, unlabel: bool) -> None:
        """Bring the renderings of the steps before ``target`` up to date. ``unlabel``: before
        the first advance (:meth:`_unlabel`)."""
        self._rerender_dirty(entries)
        while len(self.steps) < target:
            i = len(self.steps)
            source = entries(i)
            rendered, _ = self.renderer.render(i, source)
            self.steps.append(rendered)
            self._sources.append(source)
        if unlabel:
            self._unlabel(target, entries)

    def first_rewritten(self, target: int) -> int:
        """The first step the first advance (to ``target``) renders otherwise than as
        recorded (:meth:`_unlabel` left the ones before it as recorded): the marker note goes
        before it, where the cache has to be written again anyway; before the first step when
        the advance changes none."""
        first = self.renderer.plain_before
        return first if first < target else 0

    def _unlabel(self, target: int, entries: Entries) -> None:
        """Show the outputs before the first step the first advance would change as recorded,
        so that the advance writes the cache again only from that step on."""
        first = next((i for i in range(target) if _changes(self.steps[i])), target)
        old = self.renderer.plain_before
        if first == old:
            return
        self.renderer.plain_before = first
        self._dirty.update(range(min(old, first), min(max(old, first), target)))
        self._rerender_dirty(entries)

    def _rerender_dirty(self, entries: Entries) -> None:
        while self._dirty:
            step = min(self._dirty)
            self._dirty.discard(step)
            self._sources[step] = source = entries(step)
            before = self.steps[step]
            after, pointed = self.renderer.render(step, source)
            self.steps[step] = after
            self._dirty.update(p for p in pointed if p < len(self.steps))
            if after.messages != before.messages or after.elisions != before.elisions:
                self.changed.add(step)


def _changes(rendered: ViewBuilder) -> bool:
    """Whether a step's settled rendering differs from the tail's (a repeat's stub does not)."""
    return any(e.reason != "repeat" for e in rendered.elisions)
