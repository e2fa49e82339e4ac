"""CarryOn's committed state: carriers, execution context and the candidate registry.

The state is a value held whole by every accepted fold record, so the state after a fold is the
last accepted record's output (:func:`state_from_log`) and a reopened session has it without
calling the model.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from contextfold.core.folds import FoldRecord

__all__ = [
    "MAX_OBLIGATIONS",
    "Candidate",
    "Carrier",
    "CarrierKind",
    "CarryState",
    "Claim",
    "ExecutionContext",
    "Obligation",
    "carrier_id",
    "last_commit",
    "normalise_location",
    "parse_state",
    "state_from_log",
]

MAX_OBLIGATIONS = 8
"""Open obligations the execution context keeps at most."""

CarrierKind = Literal["external_object", "information_product", "situated_state"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Claim(_Frozen):
    id: str
    proposition: str
    value: str = ""
    source_steps: tuple[int, ...] = ()


class Carrier(_Frozen):
    """One continuation carrier at one version.

    A carrier has a stable identity (:func:`carrier_id`) and a version; revising it makes a
    successor (version + 1) under the same id, and a fold that does not touch it carries it forward
    unchanged. Three kinds: ``external_object`` (a work product in the environment; its id is its
    normalised location), ``information_product`` (claims compiled from the interaction) and
    ``situated_state`` (state reachable only in an application or session: anchor, state).
    """

    id: str
    kind: CarrierKind
    version: int = 1
    name: str
    location: str = ""
    """external_object: where it is (its identity, normalised)."""
    progress: str = ""
    """What progress it holds and how to reuse it (external_object), or a gist."""
    claims: tuple[Claim, ...] = ()
    """information_product: its findings."""
    anchor: str = ""
    state: str = ""
    """situated_state: the application or session (anchor) and the state established there."""
    scope: str = ""
    conditions: str = ""
    """Conditions of use: what must hold for the carrier to be reused as it is."""
    provenance: tuple[int, ...] = ()
    """The steps it rests on."""
    grounding: str = ""
    """The grounder's verdict when it was compiled (external objects)."""


class Obligation(_Frozen):
    text: str
    source_steps: tuple[int, ...] = ()
    status: Literal["open", "claimed_resolved"] = "open"
    evidence_steps: tuple[int, ...] = ()


class ExecutionContext(_Frozen):
    focus: str = ""
    continuity: str = ""
    constraints: tuple[str, ...] = ()
    continuation: str = ""
    obligations: tuple[Obligation, ...] = ()

    @property
    def open_obligations(self) -> tuple[Obligation, ...]:
        return tuple(o for o in self.obligations if o.status == "open")


class Candidate(_Frozen):
    """An entry of the tracker's registry: possible reusable progress, not yet a carrier."""

    id: str
    type: CarrierKind
    description: str
    location: str = ""
    expected_text: str = ""
    steps: tuple[int, ...] = ()
    first_seen: int = 0
    last_revised: int = 0
    version: int = 1


class CarryState(_Frozen):
    """Everything a fold commits: carriers, execution context, registry, the cut."""

    carriers: tuple[Carrier, ...] = ()
    ec: ExecutionContext = Field(default_factory=ExecutionContext)
    candidates: tuple[Candidate, ...] = ()
    cut: int = 0
    commits: int = 0
    """Accepted folds so far: the state's own version (compare-and-swap at commit)."""

    def carrier(self, cid: str) -> Carrier | None:
        return next((c for c in self.carriers if c.id == cid), None)

    def candidate(self, cid: str) -> Candidate | None:
        return next((c for c in self.candidates if c.id == cid), None)

    def cited(self) -> set[int]:
        """Every step the state cites (carriers, claims, obligations, candidates)."""
        steps: set[int] = set()
        for carrier in self.carriers:
            steps.update(carrier.provenance)
            for claim in carrier.claims:
                steps.update(claim.source_steps)
        for ob in self.ec.obligations:
            steps.update(ob.source_steps + ob.evidence_steps)
        for cand in self.candidates:
            steps.update(cand.steps)
        return steps

    def to_output(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def state_from_log(folds: Sequence[FoldRecord], strategy: str) -> tuple[CarryState, int]:
    """The state committed by the strategy's last accepted fold, and the refusals since."""
    record, refused = last_commit(folds, strategy)
    return (parse_state(record) if record else CarryState()), refused


def last_commit(folds: Sequence[FoldRecord], strategy: str) -> tuple[FoldRecord | None, int]:
    """The strategy's last accepted fold (None when none), and the refusals since."""
    refused = 0  # from the newest record back: only the last commit matters (render path)
    for record in reversed(folds):
        if record.strategy != strategy:
            continue
        if record.accepted:
            return record, refused
        refused += 1
    return None, refused


def parse_state(record: FoldRecord) -> CarryState:
    """The state an accepted fold committed."""
    return CarryState.model_validate(record.output.get("state") or {})


def normalise_location(location: str) -> str:
    """A location as an identity: quotes, ``file://``, ``./``, doubled and trailing slashes off."""
    text = location.strip().strip("'\"`").strip()
    text = re.sub(r"^file://", "", text).replace("\\", "/")
    if not text:
        return ""
    return posixpath.normpath(text)


def carrier_id(kind: CarrierKind, *, name: str, location: str = "", anchor: str = "") -> str:
    """The stable identity: the normalised location of an external object, else a slug of
    the anchor (situated state) or the name."""
    if kind == "external_object" and normalise_location(location):
        return f"obj:{normalise_location(location)}"
    base = anchor if kind == "situated_state" and anchor.strip() else name
    slug = re.sub(r"[^a-z0-9]+", "-", base.lower()).strip("-") or "unnamed"
    return f"{'info' if kind == 'information_product' else 'state'}:{slug}"
