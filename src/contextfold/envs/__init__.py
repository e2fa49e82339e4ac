"""Environments for live runs."""

from contextfold.envs.calculator import CalculatorEnv, calculate
from contextfold.envs.files import FilesEnv
from contextfold.envs.tutorial import TUTORIAL_TASKS, TutorialTask, score
from contextfold.envs.workspace import WorkspaceEnv
from contextfold.envs.workspace_tasks import WORKSPACE_TASKS, WorkspaceTask

__all__ = [
    "TUTORIAL_TASKS",
    "WORKSPACE_TASKS",
    "CalculatorEnv",
    "FilesEnv",
    "TutorialTask",
    "WorkspaceEnv",
    "WorkspaceTask",
    "calculate",
    "score",
]
