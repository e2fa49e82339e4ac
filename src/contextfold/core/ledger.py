"""The ledger ``contextfold serve`` keeps: every upstream call as the upstream billed it, beside
what the same call would have cost sent direct (:class:`LedgerEntry`).

A store that keeps it is a :class:`~contextfold.core.protocols.LedgerStore`; one entry is one
row of its ``ledger`` table, written as the call happens (a call whose request then failed was
billed all the same, so it stays). ``contextfold savings`` reads the rows back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from contextfold.core.billing import BilledUsage

__all__ = ["ARMS", "LEDGER_COLUMNS", "Arm", "LedgerEntry"]

Arm = Literal["treated", "control"]
ARMS: tuple[Arm, ...] = ("treated", "control")
"""A session's arm: served by the proxy's strategy (``treated``), or left unfolded as
``full`` would serve it (``control``: ``serve --control``)."""

_USAGE = (
    "input_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "cache_write_1h_tokens",
    "output_tokens",
)
LEDGER_COLUMNS: tuple[str, ...] = (
    "session_id",
    "unit",
    "arm",
    "step",
    "round_idx",
    "model",
    "api",
    *_USAGE,
    "billed_usd",
    *(f"direct_{name}" for name in _USAGE),
    "direct_usd",
    "sent_tokens",
    "direct_tokens",
    "stop",
    "error",
    "created_at",
)
"""The ``ledger`` table's columns after its own ``entry_idx``, in :meth:`LedgerEntry.row`'s
order."""


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One upstream call of ``contextfold serve``, as billed and as it would have been direct.

    ``billed`` is the usage the upstream reported, in its cache terms (reads, 5-minute and
    1-hour writes), priced at the model's own prices
    (:func:`~contextfold.core.billing.native_prices`). ``direct`` is the estimate of the same
    call without the proxy: the client's whole conversation as it arrived, through the meter's
    simulated cache, counted at the session's token scale (what the upstream reported for the
    views sent, over what the proxy's counter made of them). A restore round has no direct
    counterpart (the client would not have made it): its ``direct`` is zero.
    """

    session_id: str
    unit: str
    """What the arm was drawn for: the session family the client names, else the first
    session of the conversation (its branches share it). ``savings --compare`` resamples these."""
    arm: Arm
    step: int
    """Steps of the conversation when the call was sent: its depth."""
    round_idx: int
    """0 for the client's own call; 1, 2, ... for the calls after the proxy answered the
    strategy's tools itself (restore rounds)."""
    model: str
    api: str
    """The upstream's API (``anthropic``, ``chat``, ``responses``, ``gemini``)."""
    billed: BilledUsage
    billed_usd: float
    direct: BilledUsage
    direct_usd: float
    sent_tokens: int
    """What the proxy's counter made of the prompt sent (messages and tool schemas)."""
    direct_tokens: int
    """What it made of the prompt the client would have sent direct (the same counter)."""
    stop: str | None = None
    """Why the reply ended (``stop``, ``tool_calls``, ``length``, ...); None for an error."""
    error: str | None = None
    """The kind of the upstream's error when the call failed (then nothing was billed)."""
    created_at: str = ""

    @property
    def restore(self) -> bool:
        """Whether the call is a restore round (one the proxy made, not the client)."""
        return self.round_idx > 0

    def row(self) -> tuple[Any, ...]:
        """The values of :data:`LEDGER_COLUMNS`, in order."""
        return (
            self.session_id,
            self.unit,
            self.arm,
            self.step,
            self.round_idx,
            self.model,
            self.api,
            *_counts(self.billed),
            self.billed_usd,
            *_counts(self.direct),
            self.direct_usd,
            self.sent_tokens,
            self.direct_tokens,
            self.stop,
            self.error,
            self.created_at,
        )

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> LedgerEntry:
        """The entry a ``ledger`` row (its :data:`LEDGER_COLUMNS`) holds; ValueError when a
        value has the wrong type."""
        if len(row) != len(LEDGER_COLUMNS):
            raise ValueError(f"{len(row)} values for {len(LEDGER_COLUMNS)} columns")
        values = dict(zip(LEDGER_COLUMNS, row, strict=True))
        arm = values["arm"]
        if arm not in ARMS:
            raise ValueError(f"arm {arm!r} is neither treated nor control")
        return cls(
            session_id=_text(values, "session_id"),
            unit=_text(values, "unit"),
            arm=arm,
            step=_int(values, "step"),
            round_idx=_int(values, "round_idx"),
            model=_text(values, "model"),
            api=_text(values, "api"),
            billed=BilledUsage(*(_int(values, k) for k in _USAGE)),
            billed_usd=float(values["billed_usd"]),
            direct=BilledUsage(*(_int(values, f"direct_{k}") for k in _USAGE)),
            direct_usd=float(values["direct_usd"]),
            sent_tokens=_int(values, "sent_tokens"),
            direct_tokens=_int(values, "direct_tokens"),
            stop=_optional(values, "stop"),
            error=_optional(values, "error"),
            created_at=_text(values, "created_at"),
        )


def _counts(usage: BilledUsage) -> tuple[int, ...]:
    return (
        usage.input_tokens,
        usage.cache_read_tokens,
        usage.cache_write_tokens,
        usage.cache_write_1h_tokens,
        usage.output_tokens,
    )


def _int(values: dict[str, Any], key: str) -> int:
    value = values[key]
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{key} is {value!r}, not a count")
    return value


def _text(values: dict[str, Any], key: str) -> str:
    value = values[key]
    if not isinstance(value, str):
        raise ValueError(f"{key} is {value!r}, not text")
    return value


def _optional(values: dict[str, Any], key: str) -> str | None:
    return None if values[key] is None else _text(values, key)
