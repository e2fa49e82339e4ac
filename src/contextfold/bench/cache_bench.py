"""Prefix caching on a real engine: one scripted session, four ways of rendering it.

Each mode plays the same coding session through a fresh embedded engine, one-token replies so
that only prompt evaluation is measured, and keeps what the engine says it evaluated and reused:
the cache a real engine has, where replay counts reuse in 16-token blocks.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextfold.core.driver import Driver
from contextfold.core.history import History, make_step
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.core.protocols import Model
from contextfold.core.tokens import TokenCounter
from contextfold.strategies.registry import build_strategy

__all__ = ["MODES", "ModeResult", "cache_bench", "scripted_session"]

MODES: dict[str, str | Mapping[str, Any]] = {
    "full": "full",
    "per-step": "refold every=1 window=1 advance=fixed mask=false",
    "chunked-same-ops": "refold mask=false",
    "chunked": "refold",
}

SYSTEM = SystemMessage("You are a coding agent. Use the tools to fix the failing test.")


@dataclass(slots=True)
class ModeResult:
    mode: str
    calls: list[tuple[int, int]] = field(default_factory=list)
    """(prompt tokens, reused tokens) per call, as the engine reported them."""

    @property
    def prompt_tokens(self) -> int:
        return sum(p for p, _ in self.calls)

    @property
    def evaluated_tokens(self) -> int:
        return sum(p - r for p, r in self.calls)

    def to_json(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "evaluated_tokens": self.evaluated_tokens,
            "calls": [{"prompt_tokens": p, "reused_tokens": r} for p, r in self.calls],
        }


def scripted_session(steps: int, *, seed: int = 0) -> list[tuple[Message, ...]]:
    """A deterministic coding session of ``steps`` steps (the first is the task).

    A coding agent's: it reads files, runs tests, greps, and reads files again after edits (a
    file's content depends only on its name, so re-reads repeat).
    """
    rng = random.Random(seed)
    files = [f"src/mod_{i}.py" for i in range(4)]
    session: list[tuple[Message, ...]] = [(UserMessage("The test test_total fails. Fix it."),)]
    for i in range(1, steps):
        kind = rng.choice(["read", "read", "test", "grep"])
        target = rng.choice(files) if kind == "read" else "tests/"
        command = f"cat {target}" if kind == "read" else f"{kind} {target}"
        call = ToolCall(f"c{i}", "bash", json.dumps({"command": command}))
        output = _output(kind, target, rng)
        session.append(
            (AssistantMessage(f"Next: {command}", tool_calls=(call,)), output_msg(i, output))
        )
    return session


def output_msg(i: int, text: str) -> ToolMessage:
    return ToolMessage(text, f"c{i}", name="bash")


def _output(kind: str, target: str, rng: random.Random) -> str:
    if kind == "read":
        n = int(target[-4])  # a file's content depends only on its name: re-reads repeat
        return "\n".join(f"def f{j}(x):\n    return x + {n * j}" for j in range(6))
    if kind == "test":
        return f"test_total FAILED: expected 10, got {rng.randint(0, 9)}\n1 failed, 7 passed"
    return "\n".join(
        f"src/mod_{rng.randint(0, 3)}.py:{rng.randint(1, 40)}: total" for _ in range(4)
    )


def cache_bench(
    make_model: Callable[[], Model],
    counter: TokenCounter,
    *,
    steps: int = 30,
    modes: Sequence[str] = tuple(MODES),
    on_call: Callable[[str, int], None] | None = None,
) -> list[ModeResult]:
    """Play the scripted session through a fresh model per mode; one-token replies.

    The modes (:data:`MODES`):

    - ``full``: the whole history, append-only.
    - ``per-step``: refold's fold, supersede and dedup re-rendered at every step (boundary
      advancing every step, window 1): a re-read turns the earlier copy into a stub at once, so the
      prompt changes early and often (ReFold's "per-step rendering").
    - ``chunked-same-ops``: the same operators with refold's chunked boundary and cost rule.
    - ``chunked``: refold with its defaults (masking settled outputs too).
    """
    session = [make_step(i, msgs, counter) for i, msgs in enumerate(scripted_session(steps))]
    results = []
    for mode in modes:
        model, result = make_model(), ModeResult(mode)
        driver = Driver(build_strategy(MODES[mode]), History(SYSTEM, counter=counter))
        for step in session:
            if step.kind == "assistant":
                view = driver.prepare().view
                usage = model.complete(view.messages, max_tokens=1).usage
                result.calls.append((usage.prompt_tokens, usage.cached_tokens))
                if on_call is not None:
                    on_call(mode, len(result.calls))
            driver.append_step(step)
        results.append(result)
    return results
