"""``cgs``: the CarryOn-guided summary, a baseline of ``carryon``.

The same trigger, back-off and view as ``summary`` (one rewritten document, refreshed when
the live tail passes ``threshold`` estimated tokens), but the document is organised the way
CarryOn organises its context: the task and current focus, the continuation carriers by kind
(external objects, information products, situated state), then the execution context. It is
one free-text rewrite each fold: no registry, no grounding, no versions, no validation beyond
the summarising base's (non-empty, shorter than what it replaces).
"""

from __future__ import annotations

from typing import Literal

from contextfold.strategies.summary import SummaryStrategy, ThresholdConfig

__all__ = ["CgsConfig", "CgsStrategy"]

INSTRUCTION = (
    "You keep the continuation document of an AI agent: what it needs to carry on once the "
    "steps you are shown leave its view. Rewrite the previous document, if any, together "
    "with the new steps, into one complete replacement (never a patch). Organise it in "
    "Markdown under these headings: '# Task and current focus' (the requested outcome and "
    "where the work stands); '# Continuation carriers' with '## External objects' (files "
    "and documents the agent produced or changed: where each is, what progress it holds, "
    "how to reuse it, whether its save is confirmed), '## Information products' (findings "
    "with their exact values and the steps they come from) and '## Situated state' (state "
    "inside an application or session and where it holds); '# Execution context' (active "
    "requirements and constraints, unfinished work, the next action). Let an object carry "
    "what it durably stores, but keep exact values the next action needs. Keep earlier "
    "entries that still matter even when the new steps do not mention them; drop what the "
    "steps show obsolete. Do not invent anything. Answer with one JSON object: "
    '{"summary": "..."}.'
)


class CgsConfig(ThresholdConfig):
    type: Literal["cgs"] = "cgs"


class CgsStrategy(SummaryStrategy):
    """A summary organised as CarryOn's context (task and focus, carriers, EC)."""

    Config = CgsConfig
    kind = "cgs"
    instruction = INSTRUCTION
