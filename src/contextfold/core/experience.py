"""What the sessions of one workload taught: shared by the strategies that learn across sessions.

A strategy that bets on the future (refold's advances, carryon's and ufold's folds) needs three
things no single session can tell it early: how many calls are still to come, how often the
agent reaches back into outputs it has moved past, and how often the folder's folds commit. A
customer-service deployment runs sessions of about ten calls whose last write needs the
lookups before it; a coding agent runs a hundred calls and rarely looks back. Without an
:class:`Experience` each session starts from the same priors (the Copernican estimate of the
calls to come, refold's reach-back prior from the agent's use of outputs, Laplace's rule for
commits). With one, every session that ends
(:meth:`~contextfold.core.protocols.Learning.end`) adds what it showed, and the next sessions
start from that:

- **calls to come** after ``t`` calls: the mean of ``L - t + 1`` over the ended sessions that
  made ``L >= t`` calls, with :data:`PRIOR_SESSIONS` more that end at this call: a strategy
  bets only on calls the workload has shown, so in its first session, and past the longest
  session seen, it expects this call alone (the Copernican estimate counted as that one more
  session let its long tail outweigh a few ended sessions: recorded customer-service sessions
  learned alone then cost up to 0.5% more than full history);
- **reach-backs**: the ended sessions' rate, ``(hits + 1/2) / (exposed + 1)``, as a prior worth
  at most :data:`PRIOR_EXPOSURES` calls of this session (so this session's own evidence soon
  dominates), once an ended session was exposed;
- **folds that commit**: likewise, ``(committed + 1) / (asked + 2)`` worth at most
  :data:`PRIOR_FOLDS` folds.

One instance per workload and strategy: the harness (``--learn``) or the user creates it and
gives it to every session's strategy (:meth:`~contextfold.core.protocols.Learning.share`).
Sessions learn from those that ended before them, so runs in parallel learn less, and results
depend on the order sessions end; the harness runs learning sessions in order, in one process.
A *frozen* experience (:meth:`Experience.frozen_copy`, or one read from a file with
``--experience``: :mod:`contextfold.core.experience_file`) records nothing more: sessions in
parallel share it and each result is independent of the order, so what was learned on one set
of runs can be carried to runs it has not seen.
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
    """Counts over the ended sessions of one workload (thread-safe)."""

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
        ended session made as many (module doc)."""
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
