"""The fewest prompt tokens a strategy can send while it keeps every user and agent message.

    PYTHONPATH=src .venv/bin/python benchmarks/own_messages_floor.py [PATH ...]

For each recorded call, the system message, every user message and every assistant message
(the agent's text and its calls) before it, with every tool output removed: refold keeps those
messages (only a fold of steps the agent marks STALE shortens them), so no cut of outputs takes
it below this sum. Printed beside full's prompt tokens and the hindsight bound's
(``replay --hindsight``), which keeps whole steps only where a later call needs them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import replay_setup as setup

from contextfold.core.counters import resolve_counter
from contextfold.core.meter import get_profile
from contextfold.core.tokens import count_messages
from contextfold.importers import Trajectory, iter_trajectories

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SETS = [DATA / "mini-swe-agent-dev", DATA / "tau2-sierra"]


def floor(path: Path, tokenizer: str) -> int:
    """The sum over every call of the tokens before it that are not tool outputs."""
    counter = resolve_counter(tokenizer)
    total = 0
    for traj in iter_trajectories([str(path)]):
        if not isinstance(traj, Trajectory):
            continue
        kept = count_messages(counter, [traj.system])[0] if traj.system else 0
        for step in traj.counted_steps(counter):
            if step.kind == "assistant":
                total += kept
            kept += step.tokens[0]
    return total


def main() -> None:
    profile = get_profile("qwen3-8b")
    for path in [Path(p) for p in sys.argv[1:]] or SETS:
        done = setup.run([path], ["full"], prices="default", profile=profile.name, hindsight=True)
        rows = done.summaries()
        full, bound = rows["full"]["prompt_tokens"], rows["hindsight"]["prompt_tokens"]
        own = floor(path, profile.tokenizer)
        print(
            f"{path.name}: full {full:,}, own messages {own:,} ({own / full:.3f} of full, "
            f"{own / bound:.2f}x the hindsight bound {bound:,})"
        )


if __name__ == "__main__":
    setup.main_or_error(main)
