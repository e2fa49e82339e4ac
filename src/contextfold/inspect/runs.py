"""The calls of one session, per strategy: replayed, or as a live run sent them.

A replayed run renders, checks and meters each view exactly as ``contextfold replay`` does
(:func:`~contextfold.bench.replay.replay_one`). A stored run shows the prompts the call log
kept; their provenance and elisions come from rendering the session's own strategy again
when that gives back the very messages that were sent, and otherwise from matching the sent
messages against the history (a message not found there is synthetic; a step not shown whole
is elided with reason ``not sent`` and no known restore path).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contextfold.bench.replay import replay_one
from contextfold.core.errors import ContextFoldError
from contextfold.core.history import History, Step
from contextfold.core.messages import Message, SystemMessage
from contextfold.core.meter import Meter, ModelProfile, PriceTable
from contextfold.core.protocols import Folding
from contextfold.core.view import SYSTEM_PROVENANCE, Elision, Provenance, View
from contextfold.importers.base import Trajectory
from contextfold.inspect.encode import CallSeen
from contextfold.strategies.folding import FolderSource
from contextfold.strategies.registry import build_strategy

__all__ = ["Setup", "replayed_calls", "stored_calls"]


@dataclass(frozen=True, slots=True)
class Setup:
    """How every run is measured and built."""

    prices: PriceTable
    profile: ModelProfile
    budget: int | None = None
    folders: FolderSource | None = None


def replayed_calls(
    system: SystemMessage | None, steps: Sequence[Step], spec: str, history: History, setup: Setup
) -> list[CallSeen]:
    """Every view ``spec`` renders before each recorded assistant step, metered."""
    strategy = build_strategy(spec, folders=setup.folders or FolderSource())
    meter = Meter(prices=setup.prices, profile=setup.profile)
    seen: list[tuple[int, View]] = []
    traj = Trajectory(id="inspect", source="inspect", system=system, steps=())
    replay_one(
        traj,
        steps,
        strategy,
        meter,
        counter=history.counter,
        budget=setup.budget,
        check=lambda index, view: seen.append((index, view)),
    )
    return [CallSeen(i, v, r) for (i, v), r in zip(seen, meter.calls, strict=True)]


def stored_calls(
    history: History, calls: Sequence[Mapping[str, Any]], setup: Setup
) -> list[CallSeen]:
    """The calls a live session made, as sent, with the usage the model reported."""
    spec = history.meta.get("strategy")
    rendered = _rerender(history, spec) if isinstance(spec, str) else {}
    meter = Meter(prices=setup.prices, profile=setup.profile)
    out: list[CallSeen] = []
    for call in calls:
        sent = tuple(call["messages"])
        step = int(call["step"])
        view = rendered.get(step)
        if view is None or view.messages != sent:
            view = _matched(history, sent, step, str(spec or "as sent"))
        usage = call.get("usage") or {}
        reported = int(usage.get("prompt_tokens", 0)) > 0
        record = meter.record_call(
            view,
            completion_tokens=int(usage.get("completion_tokens", 0)),
            cached_tokens=int(usage.get("cached_tokens", 0)) if reported else None,
            prompt_tokens=int(usage["prompt_tokens"]) if reported else None,
        )
        out.append(CallSeen(step, view, record))
    return out


def _rerender(history: History, spec: str) -> dict[int, View]:
    """The session's strategy rendered again at every assistant step (empty when it folds
    with a model: those views depend on folder replies the call log does not hold)."""
    try:
        strategy = build_strategy(spec, folders=FolderSource())
    except ContextFoldError:
        return {}
    if isinstance(strategy, Folding):
        return {}
    views: dict[int, View] = {}
    traj = Trajectory(id="inspect", source="inspect", system=history.system, steps=())
    try:
        replay_one(
            traj,
            history.steps,
            strategy,
            Meter(),
            counter=history.counter,
            check=lambda index, view: views.__setitem__(index, view),
        )
    except ContextFoldError:
        return {}
    return views


def _matched(history: History, sent: tuple[Message, ...], step: int, name: str) -> View:
    """A view of ``sent`` whose provenance comes from finding each message in the history."""
    where: dict[Message, tuple[int, int]] = {}
    for s in history.steps[:step]:
        for message, count in zip(s.messages, s.tokens, strict=True):
            where.setdefault(message, (s.index, count))
    tokens: list[int] = []
    provenance: list[Provenance] = []
    for message in sent:
        found = where.get(message)
        if found is not None:
            tokens.append(found[1])
            provenance.append(Provenance((found[0],), "verbatim"))
        else:
            tokens.append(history.count(message))
            system = isinstance(message, SystemMessage)
            provenance.append(SYSTEM_PROVENANCE if system else Provenance((), "synthetic"))
    shown = set(sent)
    elisions = [
        Elision((s.index,), "not sent", _missing(s, shown), None)
        for s in history.steps[:step]
        if not all(m in shown for m in s.messages)
    ]
    return View(sent, tuple(tokens), tuple(provenance), tuple(elisions), strategy=name)


def _missing(step: Step, shown: set[Message]) -> int:
    return sum(t for m, t in zip(step.messages, step.tokens, strict=True) if m not in shown)
