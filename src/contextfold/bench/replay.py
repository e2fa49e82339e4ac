"""Replay recorded trajectories through strategies and measure what each would have sent.

Each strategy sees the recorded steps one by one, exactly as in a live run (folds included), and
before every recorded assistant step renders the view it would send, checked and metered.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextfold.bench.availability import ARGS_KEYS, ArgIndex, ArgTally, args_summary
from contextfold.bench.billed import bill_row, session_billing, usage_row
from contextfold.bench.cluster import FolderChoice, RaySweep
from contextfold.bench.hindsight import Hindsight
from contextfold.bench.restores import RestorePricing
from contextfold.bench.schemas import schema_tokens
from contextfold.bench.stepping import replay_one
from contextfold.core.errors import ContextFoldError, ImportFormatError
from contextfold.core.experience import Experience, start_from
from contextfold.core.folds import FoldRecord
from contextfold.core.history import Step
from contextfold.core.meter import COST_KEYS, FOLD_KEYS, Meter, ModelProfile, PriceTable
from contextfold.core.protocols import Learning
from contextfold.core.tokens import TokenCounter
from contextfold.importers.base import Trajectory
from contextfold.strategies.folding import FolderSource
from contextfold.strategies.registry import build_strategy, spec_label

__all__ = ["ReplayResult", "StrategyResult", "replay", "replay_one"]

StrategySpec = str | Mapping[str, Any]

HINDSIGHT: Mapping[str, Any] = {"type": "hindsight"}
"""Stands for the hindsight bound among the specs (built per trajectory, not by the registry)."""

SUMMARY_KEYS = (
    "trajectories",
    "skipped",
    "prompt_tokens",
    "peak_context_tokens_mean",
    "cost_usd",
    *COST_KEYS,
    "kv_bytes_peak_mean",
    "prefix_cache_reuse",
    "render_ms_median",
    "render_ms_p99",
    "removed_tokens",
    "unrecoverable_tokens",
    *FOLD_KEYS,
    "total_cost_usd",
    "restores",
    "restore_cost_usd",
    "reruns",
    "rerun_cost_usd",
    *ARGS_KEYS,
)


@dataclass(slots=True)
class StrategyResult:
    """Everything one strategy produced over a replay."""

    label: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    render_ns: list[int] = field(default_factory=list)
    fold_ms: list[float] = field(default_factory=list)
    skipped: int = 0
    errors: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """The aggregate, with exactly the keys of :data:`SUMMARY_KEYS`."""
        rows = self.rows
        prompt = sum(r["prompt_tokens"] for r in rows)
        reused = sum(r["reused_tokens"] for r in rows)
        ms = sorted(ns / 1e6 for ns in self.render_ns)
        values = {
            "trajectories": len(rows),
            "skipped": self.skipped,
            "prompt_tokens": prompt,
            "peak_context_tokens_mean": _mean(r["peak_context_tokens"] for r in rows),
            "cost_usd": sum(r["cost_usd"] for r in rows),
            **{key: sum(r[key] for r in rows) for key in COST_KEYS},
            "kv_bytes_peak_mean": _mean(r["kv_bytes_peak"] for r in rows),
            "prefix_cache_reuse": reused / prompt if prompt else 0.0,
            "render_ms_median": statistics.median(ms) if ms else 0.0,
            "render_ms_p99": _percentile(ms, 0.99),
            "removed_tokens": sum(r["removed_tokens"] for r in rows),
            "unrecoverable_tokens": sum(r["unrecoverable_tokens"] for r in rows),
            **{key: sum(r[key] for r in rows) for key in _FOLD_SUMS},
            "fold_ms_median": statistics.median(self.fold_ms) if self.fold_ms else 0.0,
            "total_cost_usd": sum(r["total_cost_usd"] for r in rows),
            "restores": sum(r["restores"] for r in rows),
            "restore_cost_usd": sum(r["restore_cost_usd"] for r in rows),
            "reruns": sum(r["reruns"] for r in rows),
            "rerun_cost_usd": sum(r["rerun_cost_usd"] for r in rows),
            **args_summary(rows),
        }
        return {key: values[key] for key in SUMMARY_KEYS}


_FOLD_SUMS = tuple(key for key in FOLD_KEYS if key != "fold_ms_median")


@dataclass(slots=True)
class ReplayResult:
    strategies: dict[str, StrategyResult]
    import_errors: list[str] = field(default_factory=list)
    skipped_files: list[dict[str, str]] = field(default_factory=list)
    """Each file or trajectory skipped for every strategy: ``path``, ``position``, ``reason``."""
    experiences: Mapping[str, Experience] = field(default_factory=dict)
    """Each label's experience after the replay (``learn``, or a given ``experience``)."""
    bills: list[dict[str, Any]] = field(default_factory=list)
    """Each trajectory whose log records its bill: ``id``, ``source``, and the bill
    (:func:`~contextfold.bench.billed.bill_row`)."""

    def by_source(self) -> dict[str, ReplayResult]:
        """The same results split by the file each trajectory came from (in the order the
        files were read): a folder of several workloads, each on its own. Render and fold
        times stay with the whole (they are not kept per trajectory)."""
        sources = dict.fromkeys(r["source"] for res in self.strategies.values() for r in res.rows)
        return {
            source: ReplayResult(
                {
                    label: StrategyResult(label, [r for r in res.rows if r["source"] == source])
                    for label, res in self.strategies.items()
                },
                bills=[b for b in self.bills if b["source"] == source],
            )
            for source in sources
        }

    def to_json(self) -> dict[str, Any]:
        """Per strategy: the summary keys plus ``rows`` (one per trajectory); and at the top
        level, ``skipped_files`` and, where logs record their bill, ``billed``
        (:func:`~contextfold.bench.billed.billed_json`)."""
        from contextfold.bench.billed import billed_json

        out: dict[str, Any] = {
            label: {**res.summary(), "rows": res.rows} for label, res in self.strategies.items()
        }
        out["skipped_files"] = self.skipped_files
        if self.bills:
            out["billed"] = billed_json(self)
        return out


def replay(
    items: Iterable[Trajectory | ImportFormatError],
    specs: Sequence[StrategySpec],
    *,
    counter: TokenCounter,
    profile: ModelProfile,
    prices: PriceTable,
    budget: int | None = None,
    on_trajectory: Callable[[str], None] | None = None,
    folders: FolderSource | None = None,
    on_fold: Callable[[FoldRecord], None] | None = None,
    hindsight: bool = False,
    sweep: RaySweep | None = None,
    folder_choice: FolderChoice | None = None,
    learn: bool = False,
    experience: Mapping[str, Experience] | None = None,
    tool_schemas: bool = False,
    price_restores: bool = True,
    price_reruns: bool = True,
) -> ReplayResult:
    """Replay every trajectory through every strategy. Malformed input is skipped and counted.

    ``folders`` gives the folder of strategies that fold with a model; ``on_fold`` hears of
    each fold as it is made (for a progress display). With ``hindsight``, a last row
    ``hindsight`` holds :mod:`~contextfold.bench.hindsight`'s bound. With a ``sweep``, each
    trajectory is a Ray task whose workers build their folders from ``folder_choice`` (none
    given: no folder model); the results are those of the loop, in the same order. With
    ``learn``, each strategy that learns across sessions shares one
    :class:`~contextfold.core.experience.Experience` over the trajectories, in order (not with
    a sweep: parallel trajectories cannot learn from each other in order), starting from the
    label's entry of ``experience`` if it has one; without ``learn``, the strategies of a
    label in ``experience`` share a frozen copy of it (a sweep may too). The experiences the
    replay ended with are in :attr:`ReplayResult.experiences`. With ``tool_schemas``, every
    prompt also carries the strategy's own tool schemas (:mod:`~contextfold.bench.schemas`).
    With ``price_restores`` (the default), restorable values a call needs are restored first,
    each restore a call of its own; with ``price_reruns`` (the default), lost ones are got
    again, each re-run a call of its own (below).

    A trajectory that names its model is priced in that model's dollars under ``prices``
    (:func:`~contextfold.core.billing.prices_for`) and cached by its provider's rule; where its
    log records the bill, every strategy's meter counts with the session's calibration
    (:func:`~contextfold.bench.billed.session_billing`), and the bill is kept in
    :attr:`ReplayResult.bills`.

    For every trajectory the steps are counted once and shared. Each strategy gets a fresh instance
    and a fresh History; the steps are appended one by one (``observe`` after each), and the view
    before each recorded assistant step is checked and metered. Render time covers ``render`` plus
    the view check, not the one-time token counting of new content. A strategy that folds with a
    model (:class:`~contextfold.core.protocols.Folding`) folds before each render with the folder
    ``folders`` resolves (``--folder``); its calls are metered apart (the ``fold_*`` keys) and its
    fold time is not render time.

    Unless ``price_restores`` is off, a value a recorded call needs that its view left out but can
    give back is restored first, with a model call of its own (:mod:`~contextfold.bench.restores`):
    ``restores`` and ``restore_cost_usd`` count those calls, and every other figure includes them.
    Unless ``price_reruns`` is off, a value a recorded call needs that its view lost is got
    again first, with a model call that runs its tool again (:mod:`~contextfold.bench.reruns`):
    ``reruns`` and ``rerun_cost_usd`` count those calls, and every other figure includes them.
    """
    labels = [spec_label(s) for s in specs] + (["hindsight"] if hindsight else [])
    if len(set(labels)) != len(labels):
        raise ContextFoldError(f"strategies repeat a label: {labels}")
    folders = folders or FolderSource()
    if learn and sweep is not None:
        raise ContextFoldError("learning across sessions replays them in order: not with a sweep")
    for spec in specs:
        build_strategy(spec, folders=folders)  # fail fast on a bad spec, before any work
    specs = [*specs, *([HINDSIGHT] if hindsight else [])]
    learned = _experiences(labels, learn, experience or {})
    priced = (price_restores, price_reruns)
    setup = _Setup(
        counter, profile, prices, budget, folders, on_fold, learned, tool_schemas, priced
    )
    result = ReplayResult({label: StrategyResult(label) for label in labels}, experiences=learned)
    if sweep is not None:
        _sweep(list(items), specs, labels, result, setup, sweep, folder_choice, on_trajectory)
        return result
    for item in items:
        if isinstance(item, ImportFormatError):
            _skip_all(result, item)
        else:
            _replay_trajectory(item, specs, labels, result, setup)
        if on_trajectory is not None:
            on_trajectory(item.id if isinstance(item, Trajectory) else "error")
    return result


def _experiences(
    labels: Sequence[str], learn: bool, known: Mapping[str, Experience]
) -> dict[str, Experience]:
    """Each label's starting experience (:func:`~contextfold.core.experience.start_from`)."""
    start = {label: start_from(known, label, learn=learn) for label in labels}
    return {label: e for label, e in start.items() if e is not None}


@dataclass(frozen=True, slots=True)
class _Setup:
    counter: TokenCounter
    profile: ModelProfile
    prices: PriceTable
    budget: int | None
    folders: FolderSource
    on_fold: Callable[[FoldRecord], None] | None
    learned: Mapping[str, Experience] = field(default_factory=dict)
    """Each label's experience, when the replay learns across sessions."""
    tool_schemas: bool = False
    """Count the strategy's own tool schemas in every prompt."""
    priced: tuple[bool, bool] = (True, True)
    """Restore what a call needs and its view can give back, and get again what it lost, each
    with a call of its own (restores, re-runs)."""


def _replay_trajectory(
    traj: Trajectory,
    specs: Sequence[StrategySpec],
    labels: Sequence[str],
    result: ReplayResult,
    setup: _Setup,
) -> None:
    if _is_empty(traj):
        _skip_all(result, ImportFormatError(traj.source, traj.id, EMPTY))
        return
    try:
        steps = traj.counted_steps(setup.counter)
    except ContextFoldError as exc:
        _skip_all(result, ImportFormatError(traj.source, traj.id, str(exc)))
        return
    index = ArgIndex.build(traj.system, steps)
    billing = session_billing(traj, steps, setup.counter)
    if billing.bill is not None:
        result.bills.append(bill_row(traj, billing.bill))
    for spec, label in zip(specs, labels, strict=True):
        res = result.strategies[label]
        meter = billing.meter(setup.prices, setup.profile, setup.counter)
        restores, reruns = setup.priced
        pricing = RestorePricing(ArgTally(index), priced=restores, reruns_priced=reruns)
        try:
            strategy = (
                Hindsight(index)
                if spec == HINDSIGHT  # equal, not identical: a Ray worker gets a copy
                else build_strategy(spec, folders=setup.folders)
            )
            if label in setup.learned and isinstance(strategy, Learning):
                strategy.share(setup.learned[label])
            if setup.tool_schemas:
                meter.tool_tokens = schema_tokens(strategy, setup.counter)
            replay_one(
                traj,
                steps,
                strategy,
                meter,
                counter=setup.counter,
                budget=setup.budget,
                on_fold=setup.on_fold,
                restores=pricing,
            )
        except ContextFoldError as exc:
            res.skipped += 1
            res.errors.append(f"{traj.source}: {traj.id}: {exc}")
            continue
        res.render_ns.extend(c.render_ns for c in meter.calls)
        res.fold_ms.extend(c.ms for record in meter.folds for c in record.calls)
        res.rows.append({**_row(traj, steps, meter), **pricing.row(), **pricing.tally.row()})


def _sweep(
    items: list[Trajectory | ImportFormatError],
    specs: Sequence[StrategySpec],
    labels: Sequence[str],
    result: ReplayResult,
    setup: _Setup,
    sweep: RaySweep,
    folder: FolderChoice | None,
    on_trajectory: Callable[[str], None] | None,
) -> None:
    """The loop of :func:`replay` as Ray tasks, one per trajectory, merged in order."""
    trajectories = [item for item in items if isinstance(item, Trajectory)]
    shared = (
        list(specs),
        list(labels),
        setup.counter,
        setup.profile,
        setup.prices,
        setup.learned,
        setup.tool_schemas,
        setup.priced,
    )
    done = (lambda i: on_trajectory(trajectories[i].id)) if on_trajectory else None
    parts = iter(
        sweep.map(
            replay_remote,
            [(t, setup.budget, folder or FolderChoice()) for t in trajectories],
            shared=shared,
            on_done=done,
        )
    )
    for item in items:
        if isinstance(item, ImportFormatError):
            _skip_all(result, item)
            if on_trajectory is not None:
                on_trajectory("error")
        else:
            _merge(result, next(parts))


def replay_remote(
    specs: list[StrategySpec],
    labels: list[str],
    counter: TokenCounter,
    profile: ModelProfile,
    prices: PriceTable,
    learned: Mapping[str, Experience],
    tool_schemas: bool,
    priced: tuple[bool, bool],
    traj: Trajectory,
    budget: int | None,
    folder: FolderChoice,
) -> ReplayResult:
    """One trajectory through every strategy (the job of a Ray task); ``learned``: frozen."""
    source = folder.source()
    setup = _Setup(counter, profile, prices, budget, source, None, learned, tool_schemas, priced)
    result = ReplayResult({label: StrategyResult(label) for label in labels})
    _replay_trajectory(traj, specs, labels, result, setup)
    return result


def _merge(into: ReplayResult, part: ReplayResult) -> None:
    into.import_errors += part.import_errors
    into.skipped_files += part.skipped_files
    into.bills += part.bills
    for label, res in part.strategies.items():
        target = into.strategies[label]
        target.rows += res.rows
        target.render_ns += res.render_ns
        target.fold_ms += res.fold_ms
        target.skipped += res.skipped
        target.errors += res.errors


def _row(traj: Trajectory, steps: Sequence[Step], meter: Meter) -> dict[str, Any]:
    return {
        "id": traj.id,
        "source": traj.source,
        "steps": len(steps),
        "outcome": traj.outcome,
        "model": traj.model,
        **meter.summary(),
        "reused_tokens": sum(c.reused_tokens for c in meter.calls),
        **usage_row(meter.usage),
    }


EMPTY = "no assistant step (an empty trajectory): nothing to replay"


def _is_empty(traj: Trajectory) -> bool:
    """No recorded assistant step: no call to meter, and zeros would pull every mean down."""
    return not any(msgs and msgs[0].role == "assistant" for msgs in traj.steps)


def _skip_all(result: ReplayResult, error: ImportFormatError) -> None:
    result.import_errors.append(str(error))
    result.skipped_files.append(
        {"path": error.path, "position": error.position, "reason": error.problem}
    )
    for res in result.strategies.values():
        res.skipped += 1


def _mean(values: Iterable[float]) -> float:
    data = list(values)
    return sum(data) / len(data) if data else 0.0


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    index = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[index]
