"""Sufficiency benchmark: does a folded context still hold what the next action needs?

A context-dependent oracle (:class:`Oracle`) runs tau2 tasks through the real agent loop with every
strategy, knowing the ground-truth actions but taking each argument value only from the view it was
just sent (:mod:`contextfold.core.verbatim` defines when a value is available). Missing values are
recovered as a real agent would (restore or recall a stub, ask the user, read again), each recovery
counted as a redundant call, or the action is skipped and the reward shows it. A scripted user
(:class:`ScriptedUser`) plays the customer without a model; noisy mode (:class:`NoisyEnv`) pads tool
outputs with distractor records. :func:`run_matrix` runs the strategy x budget x mode matrix and
:func:`aggregate` reduces it to rows (:data:`ROW_KEYS`).

Modules (the availability rule is :mod:`contextfold.core.verbatim`): :mod:`.plan` and :mod:`.lookup`
(what the oracle must do and where values come from), :mod:`.oracle` and :mod:`.recovery` (the
model), :mod:`.dialog` and :mod:`.user` (the scripted user), :mod:`.noise`, :mod:`.session` (tool
output memo), :mod:`.runner`, :mod:`.plot`, :mod:`.command` (``contextfold bench sufficiency``).
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
