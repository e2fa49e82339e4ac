"""What every strategy's config shares: :class:`~contextfold.core.protocols.StrategyConfig`,
declared with the rest of the strategy contract and importable from here too."""

from __future__ import annotations

from contextfold.core.protocols import StrategyConfig

__all__ = ["StrategyConfig"]
