"""CarryOn: object-oriented context (carriers, execution context, live tail)."""

from contextfold.strategies.carryon.grounder import Grounder
from contextfold.strategies.carryon.state import CarryState
from contextfold.strategies.carryon.strategy import CarryOnConfig, CarryOnStrategy

__all__ = ["CarryOnConfig", "CarryOnStrategy", "CarryState", "Grounder"]
