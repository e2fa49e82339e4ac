"""ReFold: reversible dedup, completion folding, chunked rendering, restore."""

from contextfold.strategies.refold.strategy import RefoldConfig, RefoldStrategy

__all__ = ["RefoldConfig", "RefoldStrategy"]
