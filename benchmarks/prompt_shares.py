"""Where full's prompt tokens are: the shares of the system prompt, the user's messages, the
agent's own messages and the tool outputs in what ``full`` sends over every recorded call.

    PYTHONPATH=src .venv/bin/python benchmarks/prompt_shares.py [PATH ...]

PATH defaults to the three shared sets in ../shared/data. ``full`` sends, at each recorded call,
the system message and every step before it, so each message counts once per later call; a
cut of tool outputs moves only their share, and a strategy that keeps the agent's own messages
whole keeps at least theirs (``own_messages_floor.py``).
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
SETS = [DATA / "mini-swe-agent-dev", DATA / "swe-agent-coder-dev", DATA / "tau2-sierra"]
PARTS = ("system", "user", "agent", "tool")
"""What each message of a view is: the system prompt, a user message (demonstrations too),
the agent's own message (its text and calls), a tool output."""


def shares(path: Path, tokenizer: str) -> dict[str, float]:
    """Each of :data:`PARTS`' share of the prompt tokens full sends over ``path``'s runs."""
    counter = resolve_counter(tokenizer)
    sent = dict.fromkeys(PARTS, 0)
    for traj in iter_trajectories([str(path)]):
        if not isinstance(traj, Trajectory):
            continue
        held = dict.fromkeys(PARTS, 0)
        if traj.system:
            held["system"] = count_messages(counter, [traj.system])[0]
        for step in traj.counted_steps(counter):
            if step.kind == "assistant":
                for part in PARTS:
                    sent[part] += held[part]
                held["agent"] += step.tokens[0]
                held["tool"] += sum(step.tokens[1:])
            else:
                held["user"] += step.total_tokens
    total = sum(sent.values())
    return {part: sent[part] / total if total else 0.0 for part in PARTS}


def main() -> None:
    tokenizer = get_profile("qwen3-8b").tokenizer
    for path in [Path(p) for p in sys.argv[1:]] or SETS:
        found = shares(path, tokenizer)
        parts = ", ".join(f"{part} {found[part]:.1%}" for part in PARTS)
        print(f"{path.name}: {parts}")


if __name__ == "__main__":
    setup.main_or_error(main)
