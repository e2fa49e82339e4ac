"""Live runs: the agent loop, and the subtask-folding agent mode."""

from contextfold.agent.loop import Agent, AgentResult, StopReason
from contextfold.agent.subtasks import SubtaskAgent, SubtaskResult

__all__ = ["Agent", "AgentResult", "StopReason", "SubtaskAgent", "SubtaskResult"]
