"""What the sessions of one workload taught, shared by the strategies that learn across sessions.

refold, carryon and ufold bet on what no single session tells early (calls still to come, how
often the agent reaches back, how often folds commit); an :class:`Experience` starts each
session from what the ended ones showed, a prior its own evidence soon outweighs
(docs/strategies/learning.md).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = [
    "JEFFREYS",
    "PRIOR_EXPOSURES",
    "PRIOR_FOLDS",
    "PRIOR_SESSIONS",
    "Experience",
    "start_from",
]

JEFFREYS = (0.5, 1.0)
"""Reach-back pseudo-counts (reach-backs, calls) before any evidence: half a reach-back."""
PRIOR_SESSIONS = 1.0
"""Sessions ending at this call counted with the ended ones in the calls to come."""
PRIOR_EXPOSURES = 8.0
"""Most calls the ended sessions' reach-back rate weighs as in a new session."""
PRIOR_FOLDS = 4.0
"""Most folds the ended sessions' commit rate weighs as in a new session."""


_COUNTS = ("lengths", "hits", "exposed", "asked", "committed")


@dataclass(slots=True)
class Experience:
    """Counts over the ended sessions of one workload (thread-safe).

    One instance per workload and strategy: each ended session adds what it showed
    (:meth:`~contextfold.core.protocols.Learning.end`), and sessions learn from those that ended
    before them, in order. A frozen copy (:meth:`frozen_copy`) records nothing more, so sessions in
    parallel can share it.
    """

    lengths: list[int] = field(default_factory=list)
    """Calls each ended session made, in the order they ended."""
    hits: int = 0
    exposed: int = 0
    asked: int = 0
    committed: int = 0
    frozen: bool = False
    """Records nothing more (:meth:`record` does nothing)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _by_length: Counter[int] = field(init=False, repr=False, compare=False)
    """How many ended sessions made each number of calls: :meth:`calls_to_come` runs at
    every render that weighs a change, so it sums over distinct lengths, not sessions."""

    def __post_init__(self) -> None:
        self._by_length = Counter(self.lengths)

    def counts(self) -> dict[str, object]:
        """The counts as plain data (what a file holds)."""
        return dict(zip(_COUNTS, self._fields()[:-1], strict=True))

    def frozen_copy(self) -> Experience:
        """The same counts, recording nothing more."""
        return Experience(*self._fields()[:-1], frozen=True)

    def thawed_copy(self) -> Experience:
        """The same counts, recording from here on."""
        return Experience(*self._fields()[:-1])

    def __reduce__(self) -> tuple[object, ...]:  # processes and Ray workers get a copy
        return Experience, self._fields()

    def _fields(self) -> tuple[list[int], int, int, int, int, bool]:
        with self._lock:
            counts = (self.hits, self.exposed, self.asked, self.committed)
            return (list(self.lengths), *counts, self.frozen)

    def record(
        self, *, calls: int, hits: int = 0, exposed: int = 0, asked: int = 0, committed: int = 0
    ) -> None:
        """Add one ended session: its calls, reach-backs and exposed calls, folds asked of
        the folder and committed."""
        if self.frozen:
            return
        with self._lock:
            self.lengths.append(max(calls, 0))
            self._by_length[max(calls, 0)] += 1
            self.hits += max(hits, 0)
            self.exposed += max(exposed, 0)
            self.asked += max(asked, 0)
            self.committed += max(committed, 0)

    def calls_to_come(self, made: int) -> float:
        """Calls expected from now on, this one (number ``made``) included: 1 before any
        ended session made as many (docs/strategies/learning.md)."""
        sessions = left = 0
        with self._lock:
            for length, count in self._by_length.items():
                if length >= made:
                    sessions += count
                    left += count * (length - made + 1)
        return (left + PRIOR_SESSIONS) / (sessions + PRIOR_SESSIONS)

    def reach_prior(self) -> tuple[float, float] | None:
        """Pseudo-counts (reach-backs, exposed calls) a session's rate starts from; None
        before any exposed call ended (the session's own prior then:
        :mod:`contextfold.strategies.refold.reach`)."""
        with self._lock:
            if not self.exposed:
                return None
            return _prior(self.hits, self.exposed, JEFFREYS, PRIOR_EXPOSURES)

    def commit_prior(self) -> tuple[float, float]:
        """Pseudo-counts (commits, folds asked) a session's commit chance starts from:
        Laplace's (1, 2) before any fold was asked."""
        with self._lock:
            return _prior(self.committed, self.asked, (1.0, 2.0), PRIOR_FOLDS)


def _prior(hits: int, tries: int, base: tuple[float, float], most: float) -> tuple[float, float]:
    """Pseudo-counts with the ended sessions' rate (``base`` added, as without them), worth
    at most ``most`` tries; ``base`` itself before any try."""
    if tries == 0:
        return base
    weight = min(float(tries), most)
    return weight * (hits + base[0]) / (tries + base[1]), weight


def start_from(known: Mapping[str, Experience], label: str, *, learn: bool) -> Experience | None:
    """What the sessions of ``label``'s strategy start from in a harness: with ``learn``, an
    experience that records (from ``known``'s counts for the label, if any); without, a
    frozen copy of the label's, or none."""
    if learn:
        return known[label].thawed_copy() if label in known else Experience()
    return known[label].frozen_copy() if label in known else None
