"""``ufold``: U-Fold's intent-aware folding for agents that talk with a user (see
:mod:`.strategy`), with a model-free variant (``folder=none``)."""

from contextfold.strategies.ufold.strategy import UfoldConfig, UfoldStrategy

__all__ = ["UfoldConfig", "UfoldStrategy"]
