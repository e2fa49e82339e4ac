"""Live runs in the workspace environment: seed a temporary directory, run, score the files.

``workspace:TASK`` (:data:`~contextfold.envs.workspace_tasks.WORKSPACE_TASKS`): the agent works
in a fresh temporary directory seeded with the task's inputs; a strategy that checks real files
(:class:`~contextfold.core.protocols.Grounded`, CarryOn's grounder) is pointed at it before the
first step; after the run the task's scorer opens the produced files; then the directory is
removed. The agent may be ``scripted`` (the task's deterministic solution).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from contextfold.bench.live_options import LiveOptions, LiveResult
from contextfold.core.errors import ConfigError
from contextfold.core.history import History
from contextfold.core.protocols import Grounded
from contextfold.strategies.registry import build_strategy

__all__ = ["fold_outcomes", "run_workspace"]


def run_workspace(name: str, task: str | None, o: LiveOptions) -> LiveResult:
    """One workspace task (``task``, when given, replaces its prompt)."""
    from contextfold.envs.workspace import WorkspaceEnv
    from contextfold.envs.workspace_tasks import WORKSPACE_SYSTEM, get_workspace_task

    spec = get_workspace_task(name)
    if o.resume:
        raise ConfigError(
            "workspace runs cannot be resumed: the first run's directory is gone; start a new run"
        )
    env = WorkspaceEnv(spec.seed)
    try:
        history = o.history(WORKSPACE_SYSTEM)
        strategy = build_strategy(o.strategy, folders=o.folders)
        grounded = False
        if isinstance(strategy, Grounded):
            strategy.ground_in(env.root)
            grounded = True
        result = o.agent(history, env, strategy=strategy).run(task=task or spec.prompt)
        reward = spec.check(env.root)
    finally:
        env.close()
    detail = {"grounded_in_workspace": grounded, **fold_outcomes(history)}
    return o.result(f"workspace:{name}", spec.id, result, reward, detail)


def fold_outcomes(history: History) -> dict[str, Any]:
    """Folds attempted and committed, and the refused ones counted by reason (its first
    line, cut to 100 characters)."""
    folds = history.folds
    refused = Counter((f.reason or "?").split("\n")[0][:100] for f in folds if not f.accepted)
    return {
        "folds_attempted": len(folds),
        "folds_committed": sum(f.accepted for f in folds),
        "fold_refusals": dict(refused),
    }
