"""How often this session's agent reaches back: the restore risk of masking, from the session.

A call reaches back when a value its arguments use is held verbatim only by a tool output
older than the window (a call to ``restore`` does by definition). The rate, reach-backs over
exposed calls with a prior from the share of calls that use any tool output (or from the
workload's ended sessions), is what the cost rule weighs an advance's restores with, shared by
the outputs refold may mask. The outputs a reach-back drew on, and what the agent restored,
stay in full: the agent comes back to them. The rule is on the docs' refold page.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from contextfold.core.argvalues import call_values
from contextfold.core.experience import JEFFREYS
from contextfold.core.history import Step
from contextfold.core.messages import AssistantMessage, ToolMessage, UserMessage
from contextfold.core.prepared import PreparedText, value_runs
from contextfold.core.verbatim import Leaf
from contextfold.strategies.refold.prefix import restores_only

__all__ = ["USE_WEIGHT", "Reach"]

USE_WEIGHT = 2.0
"""Calls' worth of the agent's use rate in the reach-back prior (docs/strategies/refold.md)."""


@dataclass(slots=True)
class Reach:
    """Counts reach-backs and exposures as the history grows (one instance per session)."""

    system: str
    window: int
    hits: int = 0
    exposed: int = 0
    uses: int = 0
    """Calls (restores aside) that took a value only a tool output held, at any distance."""
    calls: int = 0
    """Calls (restores aside) made once there was a tool output to use."""
    prior: tuple[float, float] | None = None
    """Pseudo-counts (reach-backs, exposed calls) before this session's evidence; None: the
    agent's use rate, worth :data:`USE_WEIGHT` calls."""
    _known: list[PreparedText] = field(default_factory=list)
    """User messages and the agent's own texts: what masking never hides."""
    _outputs: list[tuple[int, PreparedText]] = field(default_factory=list)
    """(step, text) of every tool output, in order."""
    _observed: list[int] = field(default_factory=list)
    drawn: set[int] = field(default_factory=set)
    """Steps whose outputs a reach-back drew on."""
    _system: PreparedText = field(init=False)

    def __post_init__(self) -> None:
        self._system = PreparedText(self.system)

    @property
    def use_rate(self) -> float:
        """Share of the calls that used a value only a tool output held (Jeffreys' prior)."""
        return (self.uses + JEFFREYS[0]) / (self.calls + JEFFREYS[1])

    @property
    def rate(self) -> float:
        """Chance that a later call needs something of the older outputs."""
        a, b = self.prior or (USE_WEIGHT * self.use_rate, USE_WEIGHT)
        return (self.hits + a) / (self.exposed + b)

    def maskable(self, kept: Collection[int]) -> int:
        """The outputs older than the window that masking may hide: those in ``kept`` and
        those a reach-back drew on aside. The rate counts reach-backs into every older output;
        leaving out the ones the agent came back to, refold stays on the safe side."""
        older = self._observed[: -self.window]
        return sum(step not in kept and step not in self.drawn for step in older)

    def hazard(self, maskable: int, pieces: int = 1) -> float:
        """The chance that a later call needs one given output of the ``pieces`` a change
        masks: the rate shared evenly by the ``maskable`` outputs (:meth:`maskable`; at least
        the ``pieces``)."""
        return self.rate / max(maskable, pieces, 1)

    def learn(self, step: Step) -> set[int]:
        """Take in one new step; returns the steps a reach-back of it drew on."""
        head = step.message
        drawn: set[int] = set()
        if isinstance(head, UserMessage):
            self._known.append(PreparedText(head.content))
            return drawn
        restoring = isinstance(head, AssistantMessage) and restores_only(head)
        if isinstance(head, AssistantMessage) and head.tool_calls:
            drawn = self._judge(head)
            if any(c.name == "restore" for c in head.tool_calls):
                drawn.add(step.index)  # what the agent brought back, it needs: keep it in full
            self.drawn |= drawn
            self._known.append(PreparedText(" ".join(c.arguments for c in head.tool_calls)))
        if isinstance(head, AssistantMessage) and head.content:
            self._known.append(PreparedText(head.content))
        outputs = [m.content for m in step.messages[1:] if isinstance(m, ToolMessage)]
        if restoring:  # kept in full, not windowed: the agent sees what it brought back
            self._known += [PreparedText(text) for text in outputs]
        elif outputs:
            self._observed.append(step.index)
            self._outputs += [(step.index, PreparedText(text)) for text in outputs]
        return drawn

    def _judge(self, head: AssistantMessage) -> set[int]:
        """Count the call; the steps its reach-back drew on."""
        restores = sum(c.name == "restore" for c in head.tool_calls)
        holders: list[set[int]] = []
        if self._observed and not restores:
            values = dict.fromkeys(v for c in head.tool_calls for v in call_values(c))
            holders = [self.holders(v) for v in values]
            self.calls += 1
            self.uses += any(holders)
        if len(self._observed) <= self.window:  # every step with outputs is shown: none older
            return set()
        window = set(self._observed[-self.window :])
        self.exposed += 1
        if restores:
            self.hits += restores
            return set()
        reached = [h for h in holders if h and not h & window]
        self.hits += min(len(reached), len(set().union(*reached)))
        return set().union(*(h for h in reached if not h & self.drawn))

    def holders(self, value: Leaf) -> set[int]:
        """The steps whose outputs hold ``value``, unless something the agent sees whatever
        is masked holds it (then none)."""
        runs = value_runs(value)
        # a value used before is in the agent's own latest texts: look there first
        if self._system.holds(value, runs) or any(
            t.holds(value, runs) for t in reversed(self._known)
        ):
            return set()
        return {s for s, text in self._outputs if text.holds(value, runs)}
