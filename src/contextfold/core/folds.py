"""Fold records: what a model-driven strategy's folder did, kept in the session's fold log.

A strategy's state is derived from its accepted records, so a reopened session renders the same
view without calling the model again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from contextfold.core.errors import StoreError

__all__ = ["FoldCall", "FoldRecord"]


@dataclass(frozen=True, slots=True)
class FoldCall:
    """Usage of one folder call."""

    prompt_tokens: int = 0
    cached_tokens: int = 0
    """Prompt tokens the folder's engine served from its prefix cache."""
    completion_tokens: int = 0
    ms: float = 0.0
    """Wall time of the call when it was made (a fold-cache hit reports the original)."""
    cache_hit: bool = False
    """Served from the fold cache: this run spent nothing on it."""

    def to_json(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "cached_tokens": self.cached_tokens,
            "completion_tokens": self.completion_tokens,
            "ms": self.ms,
            "cache_hit": self.cache_hit,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FoldCall:
        return cls(
            int(data.get("prompt_tokens", 0)),
            int(data.get("cached_tokens", 0)),
            int(data.get("completion_tokens", 0)),
            float(data.get("ms", 0.0)),
            bool(data.get("cache_hit", False)),
        )


@dataclass(frozen=True, slots=True)
class FoldRecord:
    """One fold a strategy attempted.

    A record is appended for every fold a strategy attempts, accepted or rejected (with the
    reason). It names the steps the fold covers, holds the folder's validated output and the usage
    of every folder call it took (:class:`FoldCall`: a long input is folded in rolling chunks, one
    call each, and a malformed reply may get one repair round). Records round-trip through JSON
    (:meth:`to_json`, :meth:`from_json`), which is how the stores keep them.
    """

    strategy: str
    """The strategy that folded (its state is rebuilt from its own records)."""
    kind: str
    """What was folded, e.g. ``"summary"``, ``"report"``."""
    start: int
    end: int
    """The steps covered: ``start <= index < end``."""
    at_step: int
    """The history's length when the fold was made."""
    accepted: bool
    output: Mapping[str, Any] = field(default_factory=dict)
    """The validated output (accepted), or ``{"raw": text}`` of what was refused."""
    reason: str | None = None
    """Why the fold was refused (None when accepted)."""
    calls: tuple[FoldCall, ...] = ()

    @property
    def steps(self) -> range:
        return range(self.start, self.end)

    @property
    def ms(self) -> float:
        return sum(c.ms for c in self.calls)

    def to_json(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "kind": self.kind,
            "start": self.start,
            "end": self.end,
            "at_step": self.at_step,
            "accepted": self.accepted,
            "output": dict(self.output),
            "reason": self.reason,
            "calls": [c.to_json() for c in self.calls],
        }

    @classmethod
    def from_json(cls, data: Any, *, where: str = "fold record") -> FoldRecord:
        """A record from its JSON form; raises :class:`StoreError` naming ``where``."""
        try:
            return cls(
                strategy=str(data["strategy"]),
                kind=str(data["kind"]),
                start=int(data["start"]),
                end=int(data["end"]),
                at_step=int(data["at_step"]),
                accepted=bool(data["accepted"]),
                output=dict(data.get("output") or {}),
                reason=data.get("reason"),
                calls=tuple(FoldCall.from_json(c) for c in data.get("calls") or ()),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise StoreError(f"{where} is malformed: {exc!r}") from exc
