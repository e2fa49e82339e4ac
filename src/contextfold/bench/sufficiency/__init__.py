"""Sufficiency benchmark: does a folded context still hold what the next action needs?

An oracle (:class:`Oracle`) solves tau2 tasks through the real agent loop knowing the ground
truth, but takes every argument value only from the view it was just sent; what it cannot find
it recovers as a real agent would (each a redundant call) or skips (the reward shows it). No
model anywhere, so the figures are exact; :func:`run_matrix` runs strategy x budget x mode and
:func:`aggregate` makes the rows. The availability rule is :mod:`contextfold.core.verbatim`.
"""

from __future__ import annotations

from contextfold.bench.sufficiency.noise import NoisyEnv
from contextfold.bench.sufficiency.oracle import Oracle
from contextfold.bench.sufficiency.plan import Plan, build_plan
from contextfold.bench.sufficiency.runner import (
    ROW_KEYS,
    RunResult,
    Setting,
    TaskRunner,
    aggregate,
    run_matrix,
    run_one,
)
from contextfold.bench.sufficiency.user import ScriptedUser

__all__ = [
    "ROW_KEYS",
    "NoisyEnv",
    "Oracle",
    "Plan",
    "RunResult",
    "ScriptedUser",
    "Setting",
    "TaskRunner",
    "aggregate",
    "build_plan",
    "run_matrix",
    "run_one",
]
