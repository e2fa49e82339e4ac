"""tau-bench (v1) trajectories: a JSON list of ``{task_id, trial, reward, info, traj}``.

``traj`` is the agent's OpenAI chat history, system message first. Older files (the published
``historical_trajectories``) have no ``trial``; it reads as 0.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from contextfold.core.errors import ImportFormatError
from contextfold.importers.base import Trajectory
from contextfold.importers.probe import Format, Probe
from contextfold.importers.steps import as_outcome, openai_conversation

__all__ = ["FORMAT", "read"]


def read(path: Path, data: Any) -> Iterator[Trajectory | ImportFormatError]:
    """Each entry of the list as a trajectory, or the error that stops it from being read."""
    for index, entry in enumerate(data):
        try:
            yield _entry(path, index, entry)
        except ImportFormatError as exc:
            yield exc


def _entry(path: Path, index: int, entry: Any) -> Trajectory:
    name, where = str(path), f"[{index}]"
    if not isinstance(entry, Mapping) or "traj" not in entry:
        raise ImportFormatError(name, where, "an entry must be an object with a 'traj' list")
    task_id, trial = entry.get("task_id"), entry.get("trial", 0)
    if not isinstance(task_id, str | int) or not isinstance(trial, int):
        raise ImportFormatError(name, where, "needs a task_id and an integer trial")
    grouped = openai_conversation(name, f"{where}.traj", entry["traj"])
    meta: dict[str, Any] = {"format": "tau-bench", "file": path.name, "index": index}
    meta.update(task_id=task_id, trial=trial)
    if grouped.dropped_calls:
        meta["unanswered_calls_dropped"] = grouped.dropped_calls
    return Trajectory(
        id=f"tau-bench:{task_id}:trial{trial}",
        source=name,
        system=grouped.system,
        steps=grouped.steps,
        outcome=as_outcome(name, f"{where}.reward", entry.get("reward")),
        meta=meta,
    )


def _claims(probe: Probe) -> bool:
    data = probe.document
    return isinstance(data, list) and any(isinstance(e, Mapping) and "traj" in e for e in data)


FORMAT = Format(
    name="tau-bench",
    summary="tau-bench (v1): a JSON list of {task_id, trial, reward, info, traj}",
    suffixes=(".json",),
    claims=_claims,
    read=lambda probe: read(probe.path, probe.document),
)
