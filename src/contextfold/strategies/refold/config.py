"""refold's options (``-s 'refold window=2 advance=fixed'``, a dict, or a config file)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from contextfold.strategies.base import StrategyConfig

__all__ = ["RefoldConfig"]


class RefoldConfig(StrategyConfig):
    type: Literal["refold"] = "refold"
    every: int = Field(
        1, ge=1, description="Steps the boundary must be able to move before it may advance (k)."
    )
    window: int = Field(
        1, ge=1, description="Most recent steps with tool outputs always shown in full."
    )
    advance: Literal["fixed", "cost"] = Field(
        "cost",
        description="When the boundary advances: whenever it may (fixed), or when the saving "
        "pays for rewriting the cache and the restores it may cost (cost).",
    )
    prices: str = Field("default", description="Price table the cost rule uses.")
    horizon: int | None = Field(
        None,
        ge=1,
        description="Calls the cost rule expects at least after an advance; unset: estimated "
        "from the session (about 2.3 times the calls made so far) or the workload's ended "
        "sessions.",
    )
    fold: bool = Field(True, description="Steps the agent marks STALE fold into one-line notes.")
    supersede: bool = Field(True, description="Outputs of a call run again later become stubs.")
    keep_text: bool = Field(
        False,
        description="Keep the agent's own text whole; false: before the boundary each "
        "agent step's text becomes a one-line note (its PROGRESS text, else its first line) "
        "with its calls kept, restorable with restore(step=N, part='text').",
    )
    keep_thinking: bool = Field(
        False,
        description="Keep the agent's thinking (reasoning, thinking blocks) in steps before "
        "the boundary; false: it is left out of them, restorable with "
        "restore(step=N, part='thinking').",
    )
    inputs: int = Field(
        400,
        ge=0,
        description="In the calls of a step before the boundary (a shell's aside), an argument "
        "longer than this many characters (a file body written, an edit's strings, a to-do "
        "list) is left out, restorable with restore(step=N, part='calls'). 0: never.",
    )
    mask: bool = Field(True, description="Outputs before the boundary become restorable stubs.")
    dedup: bool = Field(True, description="An output repeating an earlier one becomes a stub.")
    spans: bool = Field(True, description="Runs of lines repeating earlier output become stubs.")
    min_run: int = Field(8, ge=2, description="Shortest run of repeated lines to dedup.")
    cut: int = Field(
        250,
        ge=0,
        description="Outputs of at least this many tokens are cut as they arrive to their head, "
        "tail and the lines holding a value the task or the agent's calls name; the rest comes "
        "back by line range (see refold.trims). 0: never cut.",
    )
    instructions: bool = Field(True, description="Ask the agent for PROGRESS/STALE lines.")
    learn: bool = Field(
        True,
        description="Learn the calls to come and the reach-back rate from the workload's ended "
        "sessions when the harness shares an experience (--learn); false: each session alone.",
    )
