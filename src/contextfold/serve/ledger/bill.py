"""serve's ledger: every upstream call as the upstream billed it, beside what the same call
would have cost sent direct (:class:`Ledger`; the entries are
:class:`~contextfold.core.ledger.LedgerEntry` rows of the store). Billed: the reported usage
(:func:`billed_usage`) at the model's own prices. Direct: the client's whole conversation
through the meter's simulated cache, at the session's token scale (:meth:`Ledger.entry`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from contextfold.core.billing import BilledUsage, native_prices
from contextfold.core.caches import cache_rule, simulated_usage
from contextfold.core.ledger import LedgerEntry
from contextfold.core.meter import PriceTable
from contextfold.core.tokens import TokenCounter, count_messages
from contextfold.serve.exchange import Call
from contextfold.serve.ledger.arms import arm_of, unit_of
from contextfold.serve.ledger.metrics import Metrics
from contextfold.serve.sessions.sessions import Turn

__all__ = ["Ledger", "Scale", "billed_usage"]


def billed_usage(usage: Mapping[str, int]) -> BilledUsage:
    """A call's usage (:data:`~contextfold.serve.exchange.USAGE_KEYS`) as its bill: every
    API's prompt count includes its cache reads and writes, so plain input is what is left."""
    prompt, read = usage.get("prompt_tokens", 0), usage.get("cached_tokens", 0)
    written = usage.get("cache_write_tokens", 0)
    hour = min(usage.get("cache_write_1h_tokens", 0), written)
    output = usage.get("completion_tokens", 0)
    return BilledUsage(max(prompt - read - written, 0), read, written - hour, hour, output)


@dataclass(slots=True)
class Scale:
    """A session's token scale: the prompt tokens the upstream reported over what the proxy's
    counter made of the same prompts (1.0 until the upstream reports some); and the share of
    its billed cache writes made for an hour (the client's marks ask for one lifetime or the
    other, and would ask the same direct)."""

    reported: int = 0
    counted: int = 0
    written: int = 0
    hour: int = 0

    def add(self, billed: BilledUsage, counted: int) -> None:
        if billed.prompt_tokens > 0 and counted > 0:
            self.reported += billed.prompt_tokens
            self.counted += counted
        self.written += billed.cache_write_tokens + billed.cache_write_1h_tokens
        self.hour += billed.cache_write_1h_tokens

    @property
    def factor(self) -> float:
        return self.reported / self.counted if self.counted else 1.0

    def lifetimes(self, usage: BilledUsage) -> BilledUsage:
        """``usage`` with its cache writes split by the session's share of 1-hour writes."""
        written = usage.cache_write_tokens + usage.cache_write_1h_tokens
        hour = round(written * self.hour / self.written) if self.written else 0
        return replace(usage, cache_write_tokens=written - hour, cache_write_1h_tokens=hour)


class Ledger:
    """The entries of one proxy's upstream calls, and the scale of each session it has seen
    (kept in memory, seeded from the store's ledger when the proxy opens it)."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self._scales: dict[str, Scale] = {}

    def seed(self, entries: Iterable[LedgerEntry]) -> None:
        """Take up the scales of the sessions in ``entries`` (a restarted proxy's)."""
        for entry in entries:
            self._scale(entry.session_id).add(entry.billed, entry.sent_tokens)

    def entry(
        self,
        turn: Turn,
        call: Call,
        counter: TokenCounter,
        *,
        round_idx: int,
        usage: Mapping[str, int] | None = None,
        stop: str | None = None,
        error: str | None = None,
    ) -> LedgerEntry:
        """The entry of ``call``, the ``round_idx``-th upstream call of ``turn``'s request:
        answered with ``usage`` and ``stop``, or failed with an ``error`` of that kind.

        The direct estimate: the client's whole conversation as it arrived (unfolded, with its
        own tools) through the meter's simulated cache
        (:func:`~contextfold.core.caches.simulated_usage` by the model's provider's rule: the
        prefix the client sent at its previous call is read, the rest written, for as long as
        the session's billed writes were made), counted by the proxy's counter and scaled by
        the session's token scale (:class:`Scale`), so it is in the upstream's own tokens and
        calibrated by the bill; its output is the call's billed output (folding does not
        change the completion). A restore round has no direct counterpart: the client would
        not have made it."""
        request, meta = call.request, turn.session.history.meta
        model = str(request.body.get("model") or "")
        prices = native_prices(model)
        client_tools = _tool_tokens(counter, request.tools)
        extra = call.messages[len(turn.view.messages) :]  # the restore rounds' messages
        sent = turn.view.total_tokens + sum(count_messages(counter, list(extra)))
        sent += client_tools + _tool_tokens(counter, call.own_tools)
        billed = billed_usage(usage or {})
        scale = self._scale(turn.session.id)
        scale.add(billed, sent)
        direct_tokens = turn.received_tokens + client_tools
        direct = BilledUsage()
        if round_idx == 0 and error is None:
            shared = _shared_tokens(turn, client_tools)
            simulated = simulated_usage(
                round(scale.factor * direct_tokens),
                round(scale.factor * shared),
                billed.output_tokens,
                rule=cache_rule(model),
            )
            direct = _as_billed(scale.lifetimes(simulated), prices)
        return LedgerEntry(
            session_id=turn.session.id,
            unit=unit_of(meta, turn.session.id),
            arm=arm_of(meta),
            step=len(turn.session.history),
            round_idx=round_idx,
            model=model,
            api=call.request.api,
            billed=billed,
            billed_usd=billed.cost(prices),
            direct=direct,
            direct_usd=direct.cost(prices),
            sent_tokens=sent,
            direct_tokens=direct_tokens,
            stop=stop,
            error=error,
        )

    def count(self, entry: LedgerEntry) -> None:
        """Add ``entry`` to ``/metrics``: cache writes by lifetime, dollars by arm."""
        add, billed = self.metrics.add, entry.billed
        add("upstream_cache_write_tokens_total", billed.cache_write_tokens, ttl="5m")
        add("upstream_cache_write_tokens_total", billed.cache_write_1h_tokens, ttl="1h")
        call = "restore" if entry.restore else "client"
        add("billed_usd_total", entry.billed_usd, arm=entry.arm, call=call)
        add("direct_estimate_usd_total", entry.direct_usd, arm=entry.arm)

    def _scale(self, session_id: str) -> Scale:
        return self._scales.setdefault(session_id, Scale())


def _tool_tokens(counter: TokenCounter, tools: Sequence[dict[str, Any]]) -> int:
    """Tokens of tool schemas as JSON (0 for none)."""
    return counter.count_batch([json.dumps(list(tools))])[0] if tools else 0


def _shared_tokens(turn: Turn, tools: int) -> int:
    """Tokens of the prompt the client sent at its previous call of this conversation (its
    tools, system message and the steps it then held), which a direct call finds cached:
    none for a new conversation; a branch's, the steps it shares with its parent."""
    history = turn.session.history
    if turn.created:
        start = history.meta.get("serve", {}).get("fork_at") or 0
    else:
        start = len(history) - turn.appended
    if start <= 0:
        return 0
    return tools + history.system_tokens + sum(s.total_tokens for s in history.steps[:start])


def _as_billed(usage: BilledUsage, prices: PriceTable) -> BilledUsage:
    """``usage`` as the provider bills it: a provider whose cache writes cost no more than
    input (OpenAI's, Google's) bills no writes, only input."""
    if prices.cache_write > prices.input:
        return usage
    written = usage.cache_write_tokens + usage.cache_write_1h_tokens
    return BilledUsage(
        usage.input_tokens + written, usage.cache_read_tokens, 0, 0, usage.output_tokens
    )
