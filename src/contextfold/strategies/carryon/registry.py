"""The tracker's candidate registry, kept across folds: proposals merged into it.

A proposal with a registered id (or, for an external object, the normalised location of a
registered one) updates that candidate: a new version, ``last_revised`` set, its evidence
steps joined. Any other proposal is a new candidate ``cN``. Evidence outside the folded tail
is dropped (the tracker may only bind a candidate to steps it was shown).
"""

from __future__ import annotations

from contextfold.strategies.carryon.schemas import CandidateProposal, TrackerOutput
from contextfold.strategies.carryon.state import Candidate, normalise_location

__all__ = ["merge_candidates"]


def merge_candidates(
    registry: tuple[Candidate, ...], out: TrackerOutput, tail: range, *, at_step: int
) -> tuple[tuple[Candidate, ...], set[str]]:
    """The registry with the proposals merged, and the ids they added or revised."""
    by_id = {c.id: c for c in registry}
    touched: set[str] = set()
    for proposal in out.candidates:
        steps = tuple(sorted({s for s in proposal.evidence_steps if s in tail}))
        old = _match(by_id, proposal)
        if old is None:
            new = _new(by_id, proposal, steps, at_step)
        else:
            new = old.model_copy(
                update={
                    "description": proposal.description,
                    "location": proposal.location or old.location,
                    "expected_text": proposal.expected_text or old.expected_text,
                    "steps": tuple(sorted(set(old.steps) | set(steps))),
                    "last_revised": at_step,
                    "version": old.version + (old.id not in touched),
                }
            )
        by_id[new.id] = new
        touched.add(new.id)
    return tuple(by_id.values()), touched


def _match(by_id: dict[str, Candidate], proposal: CandidateProposal) -> Candidate | None:
    if proposal.id in by_id:
        return by_id[proposal.id]
    where = normalise_location(proposal.location)
    if proposal.type == "external_object" and where:
        for cand in by_id.values():
            if cand.type == "external_object" and normalise_location(cand.location) == where:
                return cand
    return None


def _new(
    by_id: dict[str, Candidate], proposal: CandidateProposal, steps: tuple[int, ...], at: int
) -> Candidate:
    return Candidate(
        id=f"c{len(by_id) + 1}",
        type=proposal.type,
        description=proposal.description,
        location=proposal.location,
        expected_text=proposal.expected_text,
        steps=steps,
        first_seen=at,
        last_revised=at,
    )
