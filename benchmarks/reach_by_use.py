"""How often a later call reaches back into an older tool output, by its use or its age.

Replays recorded sessions through refold's reach-back counting (``refold.reach``: a call reaches
back when a value its arguments use is held only by outputs older than the window, window 1) and
splits every (older output, exposed call) pair by the output's state before the call: **used
by the latest call** (that call took a value from it), **used earlier** (some call did, not the
latest) or **never used**; with ``--by age``, by how many outputs came after it (1: the newest
one older than the window). Prints, per class, the pairs, the reach-backs and their ratio: the
chance per call that the next call needs that output again. Usage::

    PYTHONPATH=src .venv/bin/python benchmarks/reach_by_use.py ../shared/data/tau2-sierra
    PYTHONPATH=src .venv/bin/python benchmarks/reach_by_use.py ../shared/data/tau2-sierra --by age

refold's cost rule spreads a session's reach-back rate evenly over the older outputs it may
mask; this measures how uneven it is on real runs.
"""

from __future__ import annotations

import argparse

from contextfold.core.argvalues import call_values
from contextfold.core.history import Step
from contextfold.core.messages import AssistantMessage, ToolMessage
from contextfold.core.tokens import ApproxCounter
from contextfold.importers import iter_trajectories
from contextfold.importers.base import Trajectory
from contextfold.importers.walk import discover
from contextfold.strategies.refold.prefix import restores_only
from contextfold.strategies.refold.reach import Reach

CLASSES = ("used by the latest call", "used earlier", "never used")
AGES = ("1", "2", "3", "4", "5", "6", "7-12", "13-25", "26+")

Pairs = dict[str, list[int]]
"""Per class: [pairs, reach-backs]."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", help="a recorded set (a directory or file replay reads)")
    parser.add_argument("--by", choices=("use", "age"), default="use")
    args = parser.parse_args()
    names = CLASSES if args.by == "use" else AGES
    counts: Pairs = {name: [0, 0] for name in names}
    sessions = 0
    for trajectory in iter_trajectories(p for p, _ in discover([args.path])):
        if isinstance(trajectory, Trajectory):
            sessions += 1
            _session(trajectory, counts, by_age=args.by == "age")
    print(f"{args.path}: {sessions} sessions, window 1")
    print(f"{'older output':24} {'pairs':>8} {'reach-backs':>12} {'per call':>9}")
    for name in names:
        n, k = counts[name]
        print(f"{name:24} {n:>8} {k:>12} {k / max(n, 1):>9.4f}")


def _session(trajectory: Trajectory, counts: Pairs, *, by_age: bool) -> None:
    system = trajectory.system.content if trajectory.system else ""
    reach = Reach(system, window=1)
    outputs: list[int] = []  # steps with tool outputs, restores aside
    last_use: dict[int, int] = {}
    calls = 0
    for step in trajectory.counted_steps(ApproxCounter()):
        head = step.message
        if isinstance(head, AssistantMessage) and head.tool_calls and not restores_only(head):
            holders = _holders(reach, head)
            used = set().union(*holders)
            if len(outputs) > 1:
                window = {outputs[-1]}
                reached = set().union(*(h for h in holders if h and not h & window))
                for age, older in enumerate(reversed(outputs[:-1]), start=1):
                    last = last_use.get(older)
                    name = _age(age) if by_age else _use(last, calls)
                    counts[name][0] += 1
                    counts[name][1] += older in reached
            last_use.update(dict.fromkeys(used, calls))
            calls += 1
        reach.learn(step)
        if _has_outputs(step) and not (isinstance(head, AssistantMessage) and restores_only(head)):
            outputs.append(step.index)


def _use(last: int | None, calls: int) -> str:
    return CLASSES[2 if last is None else 0 if last == calls - 1 else 1]


def _age(age: int) -> str:
    return str(age) if age <= 6 else "7-12" if age <= 12 else "13-25" if age <= 25 else "26+"


def _holders(reach: Reach, head: AssistantMessage) -> list[set[int]]:
    """Per value the call uses, the steps whose outputs hold it (none when something the agent
    sees whatever is masked holds it)."""
    values = dict.fromkeys(v for c in head.tool_calls for v in call_values(c))
    return [reach.holders(v) for v in values]


def _has_outputs(step: Step) -> bool:
    return any(isinstance(m, ToolMessage) for m in step.messages[1:])


if __name__ == "__main__":
    main()
