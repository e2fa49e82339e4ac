"""What CarryOn's folder stages answer: one pydantic schema per stage (tracker, compiler).

The schemas bound what a reply may hold (lengths, counts); what the reply may *mean* (cited
steps inside the folded tail, versions that are current, a grounded external object) is
checked by :mod:`contextfold.strategies.carryon.commit` before anything is committed.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from contextfold.strategies.carryon.state import CarrierKind

__all__ = [
    "CandidateProposal",
    "CarrierUpdate",
    "ClaimChange",
    "CompilerOutput",
    "ContextOutput",
    "ObligationOutput",
    "TrackerOutput",
]


class CandidateProposal(BaseModel):
    """A new candidate (``id`` empty or unknown) or an update of a registered one."""

    id: str = Field("", max_length=80)
    type: CarrierKind
    description: str = Field(min_length=1, max_length=400)
    location: str = Field("", max_length=300, description="Path or URL of an external object.")
    expected_text: str = Field(
        "", max_length=200, description="A short text the object should contain, if known."
    )
    evidence_steps: list[int] = Field(default_factory=list, max_length=12)


class TrackerOutput(BaseModel):
    candidates: list[CandidateProposal] = Field(default_factory=list, max_length=12)


class ClaimChange(BaseModel):
    op: Literal["add", "modify", "retract"] = "add"
    id: str = Field(min_length=1, max_length=40)
    proposition: str = Field("", max_length=300)
    value: str = Field("", max_length=300)
    source_steps: list[int] = Field(default_factory=list, max_length=12)


class CarrierUpdate(BaseModel):
    """Add a carrier, revise one (at ``base_version``) or retire one."""

    op: Literal["add", "revise", "retire"]
    kind: CarrierKind
    carrier_id: str = Field("", max_length=320, description="The carrier revised or retired.")
    base_version: int = Field(0, ge=0, description="Its version now (revise, retire).")
    candidate_id: str = Field("", max_length=80)
    candidate_version: int = Field(0, ge=0)
    name: str = Field("", max_length=120)
    location: str = Field("", max_length=300)
    progress: str = Field("", max_length=800)
    claims: list[ClaimChange] = Field(default_factory=list, max_length=16)
    anchor: str = Field("", max_length=200)
    state: str = Field("", max_length=600)
    scope: str = Field("", max_length=200)
    conditions: str = Field("", max_length=300)
    source_steps: list[int] = Field(default_factory=list, max_length=16)


class ObligationOutput(BaseModel):
    text: str = Field(min_length=1, max_length=200)
    source_steps: list[int] = Field(default_factory=list, max_length=8)
    resolved: bool = False
    evidence_steps: list[int] = Field(default_factory=list, max_length=8)


class ContextOutput(BaseModel):
    focus: str = Field("", max_length=400)
    continuity: str = Field("", max_length=600)
    constraints: list[str] = Field(default_factory=list, max_length=12)
    continuation: str = Field("", max_length=400)
    obligations: list[ObligationOutput] = Field(default_factory=list, max_length=16)


class CompilerOutput(BaseModel):
    abstain: bool = False
    reason: str = Field("", max_length=300)
    updates: list[CarrierUpdate] = Field(default_factory=list, max_length=16)
    ec: ContextOutput = Field(default_factory=ContextOutput)
