"""mypy holds every registered strategy class to the contract of :mod:`contextfold.core.protocols`.

Nothing runs here (the classes are imported for the type checker only, so the registry stays
lazy); ``tests/test_strategy_contract.py`` checks that the two tuples name every class in
:data:`~contextfold.strategies.registry.STRATEGIES`, each in the tuple its config calls for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from contextfold.core.protocols import FoldingStrategyType, StrategyType
    from contextfold.strategies.carryon import CarryOnStrategy
    from contextfold.strategies.cgs import CgsStrategy
    from contextfold.strategies.chain import ChainStrategy
    from contextfold.strategies.clip import ClipStrategy
    from contextfold.strategies.compact import CompactStrategy
    from contextfold.strategies.full import FullStrategy
    from contextfold.strategies.iterresearch import IterResearchStrategy
    from contextfold.strategies.mask import MaskStrategy
    from contextfold.strategies.prune import PruneStrategy
    from contextfold.strategies.recall import RecallStrategy
    from contextfold.strategies.refold import RefoldStrategy
    from contextfold.strategies.resum import ResumStrategy
    from contextfold.strategies.summary import SummaryStrategy
    from contextfold.strategies.supersede import SupersedeStrategy
    from contextfold.strategies.ufold import UfoldStrategy
    from contextfold.strategies.window import WindowStrategy

    BUILT_FROM_CONFIG: tuple[StrategyType, ...] = (
        FullStrategy,
        MaskStrategy,
        WindowStrategy,
        ClipStrategy,
        PruneStrategy,
        RecallStrategy,
        ChainStrategy,
        RefoldStrategy,
        SupersedeStrategy,
    )
    BUILT_WITH_FOLDER: tuple[FoldingStrategyType, ...] = (
        CompactStrategy,
        SummaryStrategy,
        ResumStrategy,
        IterResearchStrategy,
        UfoldStrategy,
        CarryOnStrategy,
        CgsStrategy,
    )
