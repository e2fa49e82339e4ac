"""Hand-made Claude Code logs whose calls are billed by a provider the test writes out rule by
rule (:func:`billed_session`): an unlogged prefix, a token scale, Anthropic's cache (exact to the
last breakpoint, a tail after it never cached, entries gone after 5 minutes unused), and the
thinking of earlier turns dropped where the model keeps only the last turn's. The calibrated
replay of such a log must give its bill back; see tests/test_calibration.py."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from contextfold.core.billing import BilledUsage
from contextfold.core.calibration import THINKING_WEIGHT
from contextfold.core.messages import AssistantMessage, UserMessage
from contextfold.core.tokens import ApproxCounter
from contextfold.importers import Trajectory, iter_trajectories
from tests._claude_logs import Log, call, text, thinking, usage

__all__ = ["Provider", "Step", "billed_session"]

START = datetime(2025, 12, 12, 3, 0, tzinfo=UTC).timestamp()


@dataclass(frozen=True, slots=True)
class Step:
    """One call: the user speaks first (``user``), the reply thinks, says and calls a tool whose
    result is ``result``; ``gap``: seconds since the call before."""

    result: str
    user: str | None = None
    thought: str = ""
    gap: float = 5.0
    final: bool = True


@dataclass(frozen=True, slots=True)
class Provider:
    """How the test's provider bills: its tokens are ``scale`` times the approximate counter's
    (a thinking block's :data:`THINKING_WEIGHT` times more), behind an unlogged ``prefix`` of
    which the first call reads ``first_read`` from an earlier session's cache; ``tail`` tokens
    after the breakpoint."""

    model: str = "claude-sonnet-4-5-20250929"
    prefix: int = 6_000
    scale: float = 1.5
    first_read: int = 4_000
    tail: int = 3
    ttl: float = 300.0
    keeps_last_turn_only: bool = True
    outputs: list[int] = field(default_factory=list)


def billed_session(path: Path, steps: list[Step], provider: Provider) -> list[BilledUsage]:
    """Write the log of ``steps`` to ``path``, each call billed by ``provider``; returns the
    bills. The log is written twice: once to count its messages, then with the bills."""
    _write(path, steps, provider, [BilledUsage()] * len(steps))
    [t] = list(iter_trajectories([path]))
    assert isinstance(t, Trajectory)
    bills = _bill(t, steps, provider)
    _write(path, steps, provider, bills)
    return bills


def _write(path: Path, steps: list[Step], provider: Provider, bills: list[BilledUsage]) -> None:
    log, at = Log(), START
    for k, (step, bill) in enumerate(zip(steps, bills, strict=True)):
        at += step.gap

        def stamp(offset: float, at: float = at) -> str:
            return datetime.fromtimestamp(at + offset, UTC).isoformat().replace("+00:00", "Z")

        if step.user or k == 0:
            log.user(step.user or "Go on.", timestamp=stamp(-1))
        used = usage(
            read=bill.cache_read_tokens,
            written=bill.cache_write_tokens,
            uncached=bill.input_tokens,
            output=bill.output_tokens if step.final else 1,
        )
        blocks = [thinking(step.thought)] if step.thought else []
        blocks += [text(f"Step {k}."), call(f"c{k}", command=f"cat f{k}")]
        for j, block in enumerate(blocks):
            last = j == len(blocks) - 1
            message = {
                "model": provider.model, "id": f"m{k}", "type": "message",
                "role": "assistant", "content": [block], "usage": used,
                "stop_reason": "tool_use" if last and step.final else None,
            }  # fmt: skip
            log.add("assistant", message=message, timestamp=stamp(0))
        log.result(f"c{k}", step.result, timestamp=stamp(1))
    path.write_text("".join(f"{line}\n" for line in log.lines), encoding="utf-8")
    json.loads(log.lines[-1])  # every line is one JSON object


def _bill(t: Trajectory, steps: list[Step], provider: Provider) -> list[BilledUsage]:
    """Each call as the provider bills it, rule by rule."""
    counted = t.counted_steps(ApproxCounter())
    messages: list[tuple[Any, int]] = []
    previous: list[float] | None = None
    end, bills, k = 0, [], 0
    for step in counted:
        if step.kind == "assistant":
            counts = _counts(messages, provider)
            prompt = provider.prefix + round(provider.scale * sum(counts))
            if previous is None:
                read = provider.first_read
            elif steps[k].gap > provider.ttl:
                read = 0
            else:
                same = 0
                while same < len(previous) and previous[same] == counts[same]:
                    same += 1
                shared = provider.prefix + round(provider.scale * sum(counts[:same]))
                read = min(shared, end)
            written = prompt - provider.tail - read
            reply = _reply_tokens(step.messages[0], step.tokens[0], provider)
            output = reply if k >= len(provider.outputs) else provider.outputs[k]
            bills.append(BilledUsage(provider.tail, read, written, 0, output))
            previous, end, k = counts, prompt - provider.tail, k + 1
        messages.extend(zip(step.messages, step.tokens, strict=True))
    return bills


def _counts(messages: list[tuple[Any, int]], provider: Provider) -> list[float]:
    """Each message's tokens as the provider counts them (the approximate counter's)."""
    users = [i for i, (m, _) in enumerate(messages) if isinstance(m, UserMessage)]
    turn = users[-1] if users and provider.keeps_last_turn_only else -1
    out = []
    for i, (message, tokens) in enumerate(messages):
        thought = _thought(message)
        out.append(tokens - thought if i < turn else tokens + (THINKING_WEIGHT - 1) * thought)
    return out


def _thought(message: Any) -> int:
    if not isinstance(message, AssistantMessage):
        return 0
    return sum(ApproxCounter().count_batch([p.text for p in message.parts if p.text]))


def _reply_tokens(message: Any, tokens: int, provider: Provider) -> int:
    return round(provider.scale * (tokens + (THINKING_WEIGHT - 1) * _thought(message)))
