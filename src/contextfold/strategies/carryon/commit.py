"""Validate then commit: the compiler's updates checked against the state, applied as a value.

Nothing is applied in place, so a refused fold leaves the state exactly as it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from contextfold.strategies.carryon.schemas import (
    CarrierUpdate,
    ClaimChange,
    CompilerOutput,
    ContextOutput,
)
from contextfold.strategies.carryon.state import (
    MAX_OBLIGATIONS,
    Candidate,
    Carrier,
    CarryState,
    Claim,
    ExecutionContext,
    Obligation,
    carrier_id,
)

__all__ = ["Compiled", "Persistence", "Refused", "compile_state"]


class Refused(Exception):
    """Why a fold commits nothing."""


@dataclass(frozen=True, slots=True)
class Persistence:
    """How the carriers moved in one fold."""

    retained: int = 0
    updated: int = 0
    added: int = 0
    retired: int = 0


@dataclass(frozen=True, slots=True)
class Compiled:
    state: CarryState
    persistence: Persistence
    obligations_dropped: int = 0


@dataclass(frozen=True, slots=True)
class Rules:
    tail: range
    eligible: Mapping[str, str]
    """Candidate id -> the grounding an external object compiled from it records."""
    carriers: bool = True
    ec: bool = True


def compile_state(
    state: CarryState, registry: tuple[Candidate, ...], out: CompilerOutput, rules: Rules
) -> Compiled:
    """The new state, or :class:`Refused` naming the first problem.

    It gives either the whole new state (with the persistence statistic) or the reason it cannot be
    committed. The checks:

    - compare-and-swap: a revised or retired carrier must be at the ``base_version`` the compiler
      wrote from, a cited candidate at the ``candidate_version``; an added carrier must be new;
    - every cited step lies in the folded tail (or is already cited by the committed state, which
      carried-forward obligations and claims may repeat);
    - an external object compiles only from a candidate the grounder let through;
    - at least one carrier changes (without carriers: the execution context changes).
    """
    if out.abstain:
        raise Refused(f"the compiler abstained: {out.reason or 'no reason given'}")
    cited = state.cited()
    _check_steps(_update_steps(out.updates if rules.carriers else []), rules.tail, cited)
    _check_steps(_ec_steps(out.ec), rules.tail, cited)
    carriers, moved = _apply(state, registry, out.updates, rules) if rules.carriers else ({}, {})
    ec, dropped = _context(out.ec) if rules.ec else (ExecutionContext(), 0)
    if rules.carriers and not moved:
        raise Refused("the fold changes no carrier")
    if not rules.carriers and ec == state.ec:
        raise Refused("the fold changes nothing in the execution context")
    kept = tuple(carriers.values())
    new = CarryState(
        carriers=kept,
        ec=ec,
        candidates=registry,
        cut=rules.tail.stop,
        commits=state.commits + 1,
    )
    counts = list(moved.values())
    persistence = Persistence(
        retained=sum(1 for c in state.carriers if c.id not in moved),
        updated=counts.count("revise"),
        added=counts.count("add"),
        retired=counts.count("retire"),
    )
    return Compiled(new, persistence, dropped)


def _update_steps(updates: Iterable[CarrierUpdate]) -> list[int]:
    steps: list[int] = []
    for u in updates:
        steps += u.source_steps
        for claim in u.claims:
            steps += claim.source_steps
    return steps


def _ec_steps(ec: ContextOutput) -> list[int]:
    return [s for o in ec.obligations for s in o.source_steps + o.evidence_steps]


def _check_steps(steps: Iterable[int], tail: range, cited: set[int]) -> None:
    outside = sorted({s for s in steps if s not in tail and s not in cited})
    if outside:
        raise Refused(
            f"cited step(s) {outside} lie outside the folded tail "
            f"(steps {tail.start}-{tail.stop - 1})"
        )


def _apply(
    state: CarryState,
    registry: tuple[Candidate, ...],
    updates: list[CarrierUpdate],
    rules: Rules,
) -> tuple[dict[str, Carrier], dict[str, str]]:
    carriers = {c.id: c for c in state.carriers}
    moved: dict[str, str] = {}
    for u in updates:
        grounding = _candidate(u, registry, rules)
        if u.op == "add":
            new = _added(u, grounding)
            if (empty := _empty(new)) is not None:
                raise Refused(f"carrier {new.id} carries nothing: {empty}")
            if new.id in carriers or new.id in moved:
                have = carriers[new.id].version if new.id in carriers else 1
                raise Refused(f"carrier {new.id} already exists (version {have}); revise it")
            carriers[new.id] = new
        else:
            old = carriers.get(u.carrier_id)
            if old is None or u.carrier_id in moved:
                raise Refused(f"carrier {u.carrier_id!r} is not in the committed state")
            if old.version != u.base_version:
                raise Refused(
                    f"stale version: carrier {old.id} is at version {old.version}, the "
                    f"compiler wrote from version {u.base_version}"
                )
            if u.op == "retire":
                del carriers[old.id]
            else:
                carriers[old.id] = _revised(old, u, grounding)
        moved[u.carrier_id if u.op != "add" else new.id] = u.op
    return carriers, moved


def _candidate(u: CarrierUpdate, registry: tuple[Candidate, ...], rules: Rules) -> str:
    """The grounding recorded with the update; checks the candidate's version and verdict."""
    if u.candidate_id:
        cand = next((c for c in registry if c.id == u.candidate_id), None)
        if cand is None:
            raise Refused(f"candidate {u.candidate_id!r} is not in the registry")
        if cand.version != u.candidate_version:
            raise Refused(
                f"stale version: candidate {cand.id} is at version {cand.version}, the "
                f"compiler wrote from version {u.candidate_version}"
            )
    if u.kind != "external_object" or u.op == "retire":
        return ""
    if u.candidate_id not in rules.eligible:
        raise Refused(
            f"external object {u.location or u.carrier_id!r} does not come from a candidate "
            "the grounder supported"
        )
    return rules.eligible[u.candidate_id]


def _added(u: CarrierUpdate, grounding: str) -> Carrier:
    name = u.name or u.location or u.anchor or "unnamed"
    cid = carrier_id(u.kind, name=name, location=u.location, anchor=u.anchor)
    claims = tuple(_claim(c) for c in u.claims if c.op != "retract")
    return Carrier(
        id=cid,
        kind=u.kind,
        name=name,
        location=u.location.strip(),
        progress=u.progress,
        claims=claims,
        anchor=u.anchor,
        state=u.state,
        scope=u.scope,
        conditions=u.conditions,
        provenance=tuple(sorted(set(u.source_steps))),
        grounding=grounding,
    )


def _empty(c: Carrier) -> str | None:
    """Why a new carrier holds nothing to continue from, or None."""
    if c.kind == "information_product" and not c.claims:
        return "an information product needs at least one claim"
    if c.kind == "situated_state" and not c.state.strip():
        return "situated state needs the state established"
    if c.kind == "external_object" and not c.location:
        return "an external object needs its location"
    return None


def _revised(old: Carrier, u: CarrierUpdate, grounding: str) -> Carrier:
    claims = {c.id: c for c in old.claims}
    for change in u.claims:
        if change.op == "retract":
            claims.pop(change.id, None)
        elif change.op == "modify" and change.id not in claims:
            raise Refused(f"claim {change.id!r} of carrier {old.id} does not exist to modify")
        else:
            claims[change.id] = _claim(change)
    updates = {
        "version": old.version + 1,
        "claims": tuple(claims.values()),
        "provenance": tuple(sorted(set(old.provenance) | set(u.source_steps))),
        "grounding": grounding or old.grounding,
    }
    for field in ("name", "progress", "anchor", "state", "scope", "conditions"):
        if getattr(u, field):
            updates[field] = getattr(u, field)
    return old.model_copy(update=updates)


def _claim(change: ClaimChange) -> Claim:
    return Claim(
        id=change.id,
        proposition=change.proposition,
        value=change.value,
        source_steps=tuple(change.source_steps),
    )


def _context(out: ContextOutput) -> tuple[ExecutionContext, int]:
    """The execution context, open obligations capped at :data:`MAX_OBLIGATIONS`."""
    obligations: list[Obligation] = []
    open_count = dropped = 0
    for o in out.obligations:
        status = "claimed_resolved" if o.resolved and o.evidence_steps else "open"
        if status == "open":
            open_count += 1
            if open_count > MAX_OBLIGATIONS:
                dropped += 1
                continue
        obligations.append(
            Obligation(
                text=o.text[:200],
                source_steps=tuple(o.source_steps),
                status=status,
                evidence_steps=tuple(o.evidence_steps),
            )
        )
    ec = ExecutionContext(
        focus=out.focus,
        continuity=out.continuity,
        constraints=tuple(out.constraints),
        continuation=out.continuation,
        obligations=tuple(obligations),
    )
    return ec, dropped
