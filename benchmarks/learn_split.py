"""Learning across sessions, judged on sessions it has not seen: refold learns (``--learn``'s
experience) on the first half of a domain's sufficiency tasks, then the second half runs with
that experience frozen, against the second half with no experience. Usage::

    PYTHONPATH=src .venv/bin/python benchmarks/learn_split.py airline [-s "refold window=2"]

Prints, per mode, the strategy's total cost over the second half as a multiple of full's and
its redundant calls per task, without and with the carried experience.
"""

from __future__ import annotations

import argparse

from contextfold.bench.sufficiency.runner import RunResult, Setting, run_task
from contextfold.core.experience import Experience
from contextfold.envs.tau2 import list_tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("domain", choices=["airline", "retail", "telecom"])
    parser.add_argument("-s", "--strategy", default="refold")
    args = parser.parse_args()
    ids = list_tasks(args.domain, model_free=True)
    first, second = ids[: len(ids) // 2], ids[len(ids) // 2 :]
    print(f"{args.domain}: learn on {len(first)} tasks, judge on the other {len(second)}")
    head = ("mode", "alone x full", "redundant", "carried x full", "redundant")
    print(f"{head[0]:8} {head[1]:>13} {head[2]:>10} {head[3]:>15} {head[4]:>10}")
    for noisy in (False, True):
        full, own = Setting("full", None, noisy), Setting(args.strategy, None, noisy)
        learned = {own: Experience()}
        for task in first:
            run_task(args.domain, task, [own], None, learned)
        frozen = {own: learned[own].frozen_copy()}
        alone = [r for t in second for r in run_task(args.domain, t, [full, own])]
        carried = [r for t in second for r in run_task(args.domain, t, [own], None, frozen)]
        base = _cost(alone, "full")
        print(
            f"{'noisy' if noisy else 'normal':8} {_cost(alone, own.strategy) / base:>13.4f} "
            f"{_redundant(alone, own.strategy, len(second)):>10.2f} "
            f"{_cost(carried, own.strategy) / base:>15.4f} "
            f"{_redundant(carried, own.strategy, len(second)):>10.2f}"
        )


def _cost(results: list[RunResult], strategy: str) -> float:
    return sum(r.cost_usd for r in results if r.setting.strategy == strategy)


def _redundant(results: list[RunResult], strategy: str, tasks: int) -> float:
    return sum(r.redundant_calls for r in results if r.setting.strategy == strategy) / tasks


if __name__ == "__main__":
    main()
