"""Sessions for the inspector's tests and benchmark: a stored live session (ScriptedModel
through the agent loop into a SQLite file or a PostgreSQL database) and a synthetic
mini-swe-agent trajectory."""

from __future__ import annotations

import json
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


def swe_trajectory(path: Path, steps: int, *, lines: int = 12) -> Path:
    """A mini-swe-agent ``*.traj.json`` with ``steps`` bash commands (files read, some twice,
    tests run), each answered by a ``<returncode>`` message of about ``lines`` lines."""
    messages = [
        {"role": "system", "content": "You are a helpful assistant that runs bash commands."},
        {"role": "user", "content": "<pr_description>\nFix pkg's off-by-one.\n</pr_description>"},
    ]
    for i in range(steps):
        command = f"cat pkg/mod{i % 7}.py" if i % 3 else f"python -m pytest tests/test_{i % 5}.py"
        body = "\n".join(f"line {k} of output {i % 9}: value_{k * 7 + i % 9}" for k in range(lines))
        messages.append(
            {"role": "assistant", "content": f"THOUGHT: step {i}.\n\n```bash\n{command}\n```"}
        )
        messages.append(
            {"role": "user", "content": f"<returncode>0</returncode>\n<output>\n{body}\n</output>"}
        )
    out = path / "synthetic__swe-1" / "synthetic__swe-1.traj.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "info": {"exit_status": "Submitted", "submission": ""},
        "messages": messages,
        "trajectory_format": "mini-swe-agent-1",
        "instance_id": "synthetic__swe-1",
    }
    out.write_text(json.dumps(data), encoding="utf-8")
    return out
