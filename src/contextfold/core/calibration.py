"""A session's prompts counted as its provider bills them (:class:`Counting`), and, where its log
records the bill, the counter calibrated by it (:class:`Calibration`, :func:`calibrate`).

The meter's own count leaves out what a log leaves out (an agent CLI's system prompt and tool
schemas) and keeps every thinking block; a provider bills its own tokens, the whole prompt, and
only the thinking it keeps. The same counting measures every strategy of a session.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from contextfold.core.billing import BilledUsage, Thinking
from contextfold.core.messages import AssistantMessage, Message, UserMessage
from contextfold.core.tokens import TokenCounter

__all__ = ["THINKING_WEIGHT", "Calibration", "Counting", "calibrate", "output_scale"]

THINKING_WEIGHT = 1.75
"""What a resent thinking block bills, per token the counter makes of the thinking a log keeps,
relative to the rest of a message (the log keeps a summary of the thinking; the provider
counts the block it signed). Fitted on the calibration half of claude-code-dev; measured in
docs/decisions/measurement.md."""

SCALE_RANGE = (0.25, 4.0)
"""A fitted scale outside this is taken for a session the fit cannot read (a prompt that
shrank): its calibration keeps the counter's own scale."""

OUTPUT_PRIOR_TOKENS = 500
"""The prompt's scale counts in the fit of a session's output scale as much as this many
counted tokens of replies whose final count the log holds."""

PRIOR_TOKENS = 5_000
"""The counter's own scale (1.0) counts in a session's fit as much as this many counted
tokens of growth: a short session (two calls of a subagent) cannot tell its scale from the
noise of one reply, a long one (a million tokens of growth) is fitted by its own bill."""


@dataclass(frozen=True, slots=True)
class Calibration:
    """A session's counter as its bill measured it (:func:`calibrate`); the default is none."""

    scale: float = 1.0
    """Billed tokens per token the counter makes of the logged messages."""
    prefix: int = 0
    """Billed tokens every prompt holds before the logged messages (the system prompt and tool
    schemas a log leaves out): counted in every call, never shown to a strategy."""
    prefix_read: int = 0
    """Of the prefix, what the first call read from a cache that earlier sessions wrote."""
    tail: int = 0
    """Tokens after a prompt's last cache breakpoint, never cached (the bill's mean uncached
    input per call after the first)."""
    first_tail: int = 0
    """The same of the first call (its billed uncached input: Claude Code 2.1 leaves the first
    prompt's own message out of its breakpoints)."""
    hour: float = 0.0
    """The share of the bill's cache writes made for an hour."""
    outputs: tuple[int, ...] = ()
    """Each recorded call's output as its log records it."""
    final: tuple[bool, ...] = ()
    """Whether each of ``outputs`` is the final count (else a lower bound: Claude Code 2.0
    logs a streamed reply with the count its stream began with)."""
    thinking: float = 1.0
    """Weight of the thinking resent, per counted token (:data:`THINKING_WEIGHT` when fitted)."""
    output_scale: float | None = None
    """Billed output tokens per counted token of a reply, from the replies whose final count
    the log holds (None: ``scale``)."""

    @property
    def fitted(self) -> bool:
        return self != Calibration()

    def output(self, call: int | None, counted: float) -> int:
        """Recorded call ``call``'s output: billed where the log has the final count, else
        ``counted`` (the reply as the counter makes it) at the session's scale, never below
        what the log records."""
        logged = self.outputs[call] if call is not None and call < len(self.outputs) else 0
        if call is not None and call < len(self.final) and self.final[call]:
            return logged
        scale = self.scale if self.output_scale is None else self.output_scale
        return max(logged, round(counted * scale))


@dataclass(slots=True)
class Counting:
    """A view's messages counted as a provider bills them: the thinking of assistant turns
    before the last user message left out where the provider keeps only the last turn's
    (``thinking="last"``: Anthropic's models before Opus 4.5 and Sonnet 4.6), the thinking it
    keeps weighted by the calibration, all at its scale, behind its prefix."""

    counter: TokenCounter | None = None
    """Counts a message's thinking (None: thinking counted as the message count has it)."""
    thinking: Thinking = "all"
    calibration: Calibration = field(default_factory=Calibration)
    _thought: dict[int, tuple[Message, int]] = field(default_factory=dict)

    def counts(self, messages: Sequence[Message], tokens: Sequence[int]) -> list[float]:
        """Each message's tokens as sent (unscaled: the counter's)."""
        weight = self.calibration.thinking
        if self.counter is None or (self.thinking == "all" and weight == 1.0):
            return [float(t) for t in tokens]
        turn = _last_user(messages) if self.thinking == "last" else -1
        out = []
        for i, (message, count) in enumerate(zip(messages, tokens, strict=True)):
            thought = self._thinking(message)
            out.append(count - thought if i < turn else count + (weight - 1.0) * thought)
        return out

    def prompt(self, counts: Sequence[float], extra: int = 0) -> int:
        """The billed prompt of messages counted ``counts`` behind ``extra`` tokens of tool
        schemas: the prefix, then the rest at the session's scale."""
        cal = self.calibration
        return cal.prefix + round(cal.scale * (sum(counts) + extra))

    def reply(self, message: Message, tokens: int) -> float:
        """A reply's tokens as its output (its thinking weighted; unscaled)."""
        if self.counter is None:
            return float(tokens)
        return tokens + (self.calibration.thinking - 1.0) * self._thinking(message)

    def _thinking(self, message: Message) -> int:
        """Tokens of an assistant message's thinking: its reasoning and its provider parts'
        text (thinking blocks), counted once per message."""
        if not isinstance(message, AssistantMessage) or self.counter is None:
            return 0
        texts = [message.reasoning or "", *(p.text for p in message.parts)]
        texts = [t for t in texts if t]
        if not texts:
            return 0
        known = self._thought.get(id(message))
        if known is None or known[0] is not message:
            known = (message, sum(self.counter.count_batch(texts)))
            self._thought[id(message)] = known
        return known[1]


def _last_user(messages: Sequence[Message]) -> int:
    """The index of the last user message (one that is no tool result), or -1."""
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], UserMessage):
            return i
    return -1


def calibrate(
    counted: Sequence[float],
    billed: Sequence[BilledUsage],
    *,
    replies: Sequence[float] = (),
    outputs: Sequence[int] = (),
    final: Sequence[bool] = (),
    thinking: float = 1.0,
) -> Calibration:
    """The calibration of a session whose ``k``-th call sent logged messages the counter made
    ``counted[k]`` of (thinking weighted by ``thinking``) and was billed ``billed[k]``; its log
    records each call's ``outputs``, ``final`` where the count is the final one, of a reply
    the counter made ``replies[k]`` of.

    The prefix is what the first call's billed prompt holds beyond its logged messages; the
    scale makes the rest of every prompt add up to the bill: with ``P`` the prefix, ``s`` the
    scale, ``Y`` billed and ``M`` counted prompts, ``P = Y[0] - s M[0]`` and
    ``sum(Y) = n P + s sum(M)``, the counter's own scale weighing as :data:`PRIOR_TOKENS` of
    growth (a session of one call keeps it). A scale the fit cannot read
    (:data:`SCALE_RANGE`) is the counter's."""
    if not billed:
        return Calibration()
    prompts = [b.prompt_tokens for b in billed]
    n, first = len(prompts), prompts[0]
    grown = sum(counted) - n * counted[0]
    scale = (sum(prompts) - n * first + PRIOR_TOKENS) / (grown + PRIOR_TOKENS)
    if not SCALE_RANGE[0] <= scale <= SCALE_RANGE[1]:
        scale = 1.0
    prefix = max(round(first - scale * counted[0]), 0)
    later = [b.input_tokens for b in billed[1:]] or [billed[0].input_tokens]
    written = sum(b.cache_write_tokens + b.cache_write_1h_tokens for b in billed)
    hour = sum(b.cache_write_1h_tokens for b in billed) / written if written else 0.0
    return Calibration(
        scale=scale,
        prefix=prefix,
        prefix_read=min(billed[0].cache_read_tokens, prefix),
        tail=round(sum(later) / len(later)),
        first_tail=billed[0].input_tokens,
        hour=hour,
        outputs=tuple(outputs),
        final=tuple(final),
        thinking=thinking,
        output_scale=output_scale(scale, replies, outputs, final),
    )


def output_scale(
    scale: float, replies: Sequence[float], outputs: Sequence[int], final: Sequence[bool]
) -> float:
    """Billed output per counted reply token over the calls whose final count is known, the
    prompt's ``scale`` weighing as :data:`OUTPUT_PRIOR_TOKENS` of them (a reply resent as
    input carries more than its output did: the chat template; some thinking no log shows)."""
    known = [(o, r) for o, r, f in zip(outputs, replies, final, strict=False) if f]
    billed = sum(o for o, _ in known) + OUTPUT_PRIOR_TOKENS * scale
    return billed / (sum(r for _, r in known) + OUTPUT_PRIOR_TOKENS)
