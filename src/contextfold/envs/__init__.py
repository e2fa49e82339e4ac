"""Environments for live runs."""

from contextfold.envs.calculator import CalculatorEnv, calculate
from contextfold.envs.files import FilesEnv
from contextfold.envs.tutorial import TUTORIAL_TASKS, TutorialTask, score

__all__ = ["TUTORIAL_TASKS", "CalculatorEnv", "FilesEnv", "TutorialTask", "calculate", "score"]
