"""What contextfold saved, or would save, on the user's own sessions (``contextfold savings``):
serve's ledger (or a replay's output) per session and in total, and the treated sessions
beside a control group (``serve --control``) with bootstrap intervals and an equivalence test
(:mod:`contextfold.savings.compare`, which needs numpy).
"""

from contextfold.savings.sources import SessionSavings, Source, load_source

__all__ = ["SessionSavings", "Source", "load_source"]
