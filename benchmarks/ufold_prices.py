"""Sufficiency-session cost under both price tables: full against the model-free ufold.

``bench sufficiency`` prices a session under the default table only; this runs the same oracle
sessions (tau2 tasks, noisy or normal, one budget) and prices every call the agent made under
each table in ``PRICE_TABLES`` (the same call records, so only the prices differ). Means per
task. Usage::

    PYTHONPATH=src .venv/bin/python benchmarks/ufold_prices.py airline 50 [--normal]
"""

from __future__ import annotations

import sys
from collections import defaultdict

from contextfold.bench.sufficiency.runner import RunResult, Setting, TaskRunner
from contextfold.core.meter import PRICE_TABLES, CallRecord, Meter
from contextfold.envs.tau2 import list_tasks

STRATEGIES = ("full", "ufold folder=none")


def main(domain: str, tasks: int, noisy: bool) -> None:
    meters = {name: Meter(prices=table) for name, table in PRICE_TABLES.items()}
    totals: dict[tuple[str, str], float] = defaultdict(float)
    ids = list_tasks(domain, model_free=True)[:tasks]
    calls: list[CallRecord] = []  # the latest run's

    def keep(_: RunResult, meter: Meter) -> None:
        calls[:] = meter.calls

    for k, task in enumerate(ids, 1):
        runner = TaskRunner(domain, task, on_run=keep)
        for spec in STRATEGIES:
            runner.run(Setting(spec, 32000, noisy))
            for name, table in meters.items():
                totals[spec, name] += sum(
                    table.call_cost(c.prompt_tokens, c.reused_tokens, c.completion_tokens)
                    for c in calls
                )
        print(f"\r{k}/{len(ids)} tasks", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    mode = "noisy" if noisy else "normal"
    print(f"{domain}, {mode}, {len(ids)} tasks, budget 32000: mean $ per task")
    print(f"{'strategy':<20}" + "".join(f"{name:>12}" for name in meters))
    for spec in STRATEGIES:
        row = "".join(f"{totals[spec, name] / len(ids):>12.4f}" for name in meters)
        print(f"{spec:<20}{row}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), "--normal" not in sys.argv[3:])
