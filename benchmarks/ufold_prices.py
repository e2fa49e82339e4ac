"""Sufficiency-session cost under both price tables: full against the model-free ufold (or
the strategies named with ``-s``).

``bench sufficiency --prices TABLE`` prices the sessions under one table a run; this runs the
same oracle sessions (tau2 tasks, noisy or normal, one budget) once and prices every call the
agent made under each table in ``PRICE_TABLES`` (the same call records, so only the prices
differ). Means per task. Usage::

    PYTHONPATH=src .venv/bin/python benchmarks/ufold_prices.py airline 50 [--normal] \
        [-s full -s refold -s "refold prices=openai" ...] [--budget N|none]

The budget is 32,000 tokens unless ``--budget`` says otherwise (``none``: unlimited).

A strategy whose own cost rule reads a price table (refold, ufold) weighs its choices under the
table its spec names (``default`` unless ``prices=`` says otherwise).
"""

from __future__ import annotations

import sys
from collections import defaultdict

from contextfold.bench.sufficiency.runner import RunResult, Setting, TaskRunner
from contextfold.core.meter import PRICE_TABLES, CallRecord, Meter
from contextfold.envs.tau2 import list_tasks

STRATEGIES = ("full", "ufold folder=none")


def main(
    domain: str,
    tasks: int,
    noisy: bool,
    strategies: tuple[str, ...] = STRATEGIES,
    budget: int | None = 32000,
) -> None:
    meters = {name: Meter(prices=table) for name, table in PRICE_TABLES.items()}
    totals: dict[tuple[str, str], float] = defaultdict(float)
    ids = list_tasks(domain, model_free=True)[:tasks]
    calls: list[CallRecord] = []  # the latest run's

    def keep(_: RunResult, meter: Meter) -> None:
        calls[:] = meter.calls

    for k, task in enumerate(ids, 1):
        runner = TaskRunner(domain, task, on_run=keep)
        for spec in strategies:
            runner.run(Setting(spec, budget, noisy))
            for name, table in meters.items():
                totals[spec, name] += sum(
                    table.call_cost(c.prompt_tokens, c.reused_tokens, c.completion_tokens)
                    for c in calls
                )
        print(f"\r{k}/{len(ids)} tasks", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    mode = "noisy" if noisy else "normal"
    print(f"{domain}, {mode}, {len(ids)} tasks, budget {budget or 'none'}: mean $ per task")
    width = max(20, *(len(spec) + 2 for spec in strategies))
    print(f"{'strategy':<{width}}" + "".join(f"{name:>12}" for name in meters))
    for spec in strategies:
        row = "".join(f"{totals[spec, name] / len(ids):>12.4f}" for name in meters)
        print(f"{spec:<{width}}{row}")


def _specs(args: list[str]) -> tuple[str, ...]:
    return tuple(args[i + 1] for i, arg in enumerate(args[:-1]) if arg == "-s") or STRATEGIES


def _budget(args: list[str]) -> int | None:
    given = [args[i + 1] for i, arg in enumerate(args[:-1]) if arg == "--budget"]
    if not given:
        return 32000
    return None if given[-1] == "none" else int(given[-1])


if __name__ == "__main__":
    rest = sys.argv[3:]
    main(sys.argv[1], int(sys.argv[2]), "--normal" not in rest, _specs(rest), _budget(rest))
