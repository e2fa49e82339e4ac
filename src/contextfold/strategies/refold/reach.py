"""How often this session's agent reaches back: the restore risk of masking, from the session.

A call **reaches back** when one of the values its arguments use (the rule of
:func:`contextfold.core.argvalues.call_values`) is held verbatim by a tool output older than the
window and by nothing the agent still sees once those outputs are stubs: not the system prompt,
a user message, the agent's own earlier text (its replies and call arguments) or an output in
the window. An output kept in full (below) counts like any other: the call risked nothing, but
an agent that comes back to what it looked up will come back to the outputs refold masks as
well (counting only reach-backs into masked outputs made a customer-service agent that re-used
its customer's record at every call look as if it never reached back: retail sessions then
restored the orders refold had masked at their final writes). A call to ``restore`` reaches
back by definition. A call counts as many reach-backs as it restores steps, or as it uses
values that way (at most as many as the steps holding them); what a restore brought back is
then seen like the agent's own texts, so using it is not a second reach-back. A call is
**exposed** when there was an older output to reach back into; the rate

    rate = (reach-backs + a) / (exposed calls + b)

is how many older outputs a later call is expected to need. The prior ``(a, b)`` is worth
:data:`USE_WEIGHT` calls at the rate this agent **uses** outputs at all: the share of its calls
(restores aside) that take a value only some tool output held, at any distance, window
included; Jeffreys' half a use before any call. An agent whose every lookup feeds the next call
(a customer-service agent: a user's record, then their order, then its product) is likely to
reach back as soon as the window passes what it looked up; an agent that mostly reads (a coding
agent running tests and greps) is not. Before any exposed call, the use rate is the whole
estimate; every exposed call then weighs as much as a call's worth of the prior. (Jeffreys' half
a reach-back alone, as before, let a chain of lookups three calls old look safe to mask: its
final write then restored them.) With an :class:`~contextfold.core.experience.Experience`, the
prior is the rate of the workload's ended sessions instead, worth a few calls, once one of them
was exposed.
Customer-service agents re-use ids that an early lookup returned many calls later (tau2:
about one call in six reaches back); coding agents mostly act on what they just read, or name
it in their own commands first (SWE: about one in fifteen).
The cost rule weighs an advance's expected restores with this rate, shared evenly by the outputs
older than the window that refold may mask (:meth:`Reach.maskable`: the ones kept in full aside).

The outputs a reach-back drew on (``drawn``) are the ones this agent comes back to (a
customer's record, the list of their orders): refold keeps them in full instead of masking
them, unless they are settled already. So are the results of the agent's own restores:
masking what it just brought back would only make it restore that again.
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
"""Calls' worth of the agent's use rate in the reach-back prior (module doc)."""


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
