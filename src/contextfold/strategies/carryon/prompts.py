"""The instructions of CarryOn's folder stages (written for this project from the method)."""

from __future__ import annotations

__all__ = ["COMPILER", "COMPILER_CARRIERS_ONLY", "COMPILER_EC_ONLY", "TRACKER"]

TRACKER = (
    "You watch an AI agent at work and keep a registry of candidate progress: things later "
    "steps could reuse instead of rereading the history that produced them. Three types: "
    "external_object (a file or document the agent created or changed; give its path as "
    "location), information_product (a finding: values, names, conclusions established by "
    "the steps), situated_state (state that exists only inside an application or session, "
    "e.g. a logged-in page or a running server). Read the registry and the new steps. "
    "Propose new candidates (leave id empty) or updates of registered ones (give their id), "
    "each with the step numbers that are its evidence. For a file, add expected_text when "
    "the steps show a short text it must contain. Propose nothing that the steps do not "
    'show. Answer with one JSON object: {"candidates": [...]}.'
)

_CARRIERS = (
    "Carriers are the reusable progress: for each candidate you are given, decide whether "
    "to add a carrier, revise an existing one (give carrier_id and its current version as "
    "base_version), retire one that the steps show obsolete, or leave it. Cite the "
    "candidate_id and candidate_version you compile from. For an external object record "
    "what progress the object holds and how to reuse it, not its whole content. For an "
    "information product write claims {op, id, proposition, value, source_steps}; op is "
    "add, modify or retract. For situated state give anchor (where) and state (what holds "
    "there). Every carrier says its conditions of use and scope. Carriers you do not "
    "mention are kept as they are. External objects may only come from candidates marked "
    "compilable. "
)

_EC = (
    "Then write the execution context the carriers do not hold: focus (what the agent is "
    "doing now), continuity (where the work stands), active constraints, the immediate "
    "continuation, and at most 8 open obligations, each one imperative sentence under 160 "
    "characters with the steps it comes from. Keep obligations that still hold; mark one "
    "resolved only with the steps that show it done (evidence_steps). Do not ask to redo "
    "work a carrier already records as done. "
)

_RULES = (
    "Cite only step numbers you were shown. If nothing reusable can be compiled, set "
    'abstain to true and say why. Answer with one JSON object: {"abstain": false, '
    '"reason": "", "updates": [...], "ec": {...}}.'
)

COMPILER = (
    "You compile the context an AI agent continues from, once the steps you are shown are "
    "retired from its view. " + _CARRIERS + _EC + _RULES
)

COMPILER_EC_ONLY = (
    "You compile the context an AI agent continues from, once the steps you are shown are "
    "retired from its view. Write no carrier updates (leave updates empty). " + _EC + _RULES
)

COMPILER_CARRIERS_ONLY = (
    "You compile the context an AI agent continues from, once the steps you are shown are "
    "retired from its view. " + _CARRIERS + "Leave ec empty. " + _RULES
)
