"""Live runs: the agent loop."""

from contextfold.agent.loop import Agent, AgentResult, StopReason

__all__ = ["Agent", "AgentResult", "StopReason"]
