"""A stored live session for the inspector's tests: ScriptedModel through the agent loop into
a SQLite file or a PostgreSQL database (the synthetic SWE trajectory the benchmark shares is
in benchmarks/_fixtures.py)."""

from __future__ import annotations

from pathlib import Path

from contextfold.agent import Agent
from contextfold.core.history import History
from contextfold.core.messages import SystemMessage
from contextfold.core.store import open_store
from contextfold.envs import FilesEnv
from contextfold.models import ScriptedModel, tool_call
from contextfold.strategies.registry import build_strategy

FILES = {
    f"pkg/mod{i}.py": "".join(f"def f{i}_{j}(x):\n    return x + {j}\n" for j in range(6))
    for i in range(4)
}


def stored_session(
    path: Path | str, *, strategy: str = "window keep=2", session: str = "live-1"
) -> None:
    """Six calls of a scripted agent reading files, kept with their prompts in ``path`` (a
    file, or a ``postgresql://`` URL)."""
    reads = [tool_call("read_file", {"path": f"pkg/mod{i % 4}.py"}) for i in range(5)]
    with open_store(path) as store:
        history = History(
            SystemMessage("You fix bugs."),
            store=store,
            session_id=session,
            meta={"strategy": strategy},
        )
        model = ScriptedModel([*reads, "All four modules read; nothing to fix."])
        agent = Agent(model, build_strategy(strategy), FilesEnv(FILES), history=history)
        agent.run("Read every module of pkg and report.")
