"""What every strategy's config shares."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["StrategyConfig"]


class StrategyConfig(BaseModel):
    """Base of every strategy config: frozen, unknown fields refused.

    Subclasses declare ``type: Literal["name"] = "name"`` and their own options.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: str
