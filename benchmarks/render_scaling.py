"""Render time against session length on a synthetic agent session (no data needed).

    .venv/bin/python benchmarks/render_scaling.py [--steps 250 500 1000] [--spec refold ...]

The session mimics a coding agent: it reads files (some again after edits), runs tests whose
output repeats, greps, and edits. For each strategy and length it prints the total render time
(``render`` plus the view check, before every assistant step) and the per-step median and p99.
Linear growth means the total doubles when the length doubles.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from contextfold.core.history import History, Step, make_step
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.core.pipeline import render_checked
from contextfold.core.tokens import ApproxCounter
from contextfold.strategies.registry import build_strategy


def _output(rng: random.Random, kind: str, n: int) -> str:
    if kind == "read":
        return "\n".join(f"{i + 1:4d}  value_{i} = compute({i}, {i * 3})" for i in range(n))
    if kind == "test":
        fails = rng.randint(0, 3)
        return "\n".join([f"test_{i} PASSED" for i in range(n)] + [f"{fails} failed"])
    return "\n".join(
        f"src/mod_{rng.randint(0, 9)}.py:{rng.randint(1, 400)}: match" for _ in range(n)
    )


def synthetic_steps(length: int, seed: int = 0) -> list[tuple[Message, ...]]:
    rng = random.Random(seed)
    steps: list[tuple[Message, ...]] = [(UserMessage("Fix the failing tests in src/."),)]
    while len(steps) < length:
        i = len(steps)
        kind = rng.choice(["read", "read", "test", "grep"])
        target = f"src/mod_{rng.randint(0, 9)}.py" if kind == "read" else "tests/"
        call = ToolCall(f"c{i}", "bash", json.dumps({"command": f"{kind} {target}"}))
        thought = AssistantMessage(f"Step {i}: {kind} {target}.", tool_calls=(call,))
        result = ToolMessage(_output(rng, kind, rng.randint(20, 120)), f"c{i}", name="bash")
        steps.append((thought, result))
    return steps


def run(spec: str, steps: list[Step], system: SystemMessage) -> list[int]:
    strategy = build_strategy(spec)
    history = History(system, counter=ApproxCounter())
    times: list[int] = []
    for step in steps:
        if step.kind == "assistant":
            start = time.perf_counter_ns()
            render_checked(strategy, history)
            times.append(time.perf_counter_ns() - start)
        history.append_step(step)
        strategy.observe(step, history)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, nargs="+", default=[250, 500, 1000])
    parser.add_argument("--spec", action="append", default=None)
    args = parser.parse_args()
    specs = args.spec or ["full", "refold", "refold advance=fixed", "mask"]
    system = SystemMessage("You are a coding agent.")
    counter = ApproxCounter()
    print(f"{'spec':24} {'steps':>6} {'total ms':>9} {'median ms':>10} {'p99 ms':>8}")
    for spec in specs:
        for length in args.steps:
            steps = [make_step(i, m, counter) for i, m in enumerate(synthetic_steps(length))]
            times = sorted(run(spec, steps, system))
            p99 = times[min(len(times) - 1, round(0.99 * (len(times) - 1)))]
            print(
                f"{spec:24} {length:6d} {sum(times) / 1e6:9.1f} "
                f"{statistics.median(times) / 1e6:10.3f} {p99 / 1e6:8.3f}"
            )


if __name__ == "__main__":
    main()
