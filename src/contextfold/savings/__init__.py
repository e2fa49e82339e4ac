"""What contextfold saved, or would save, on the user's own sessions (``contextfold savings``):
serve's ledger (or a replay's output) per session and in total, and the treated sessions
beside a control group (``serve --control``) with bootstrap intervals and an equivalence test.
"""

from contextfold.savings.compare import Comparison, compare
from contextfold.savings.sources import SessionSavings, Source, load_source

__all__ = ["Comparison", "SessionSavings", "Source", "compare", "load_source"]
