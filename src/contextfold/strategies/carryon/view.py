"""CarryOn's context message: the committed carriers and execution context as Markdown."""

from __future__ import annotations

from collections.abc import Iterable

from contextfold.strategies.carryon.state import Carrier, CarryState, ExecutionContext

__all__ = ["context_text"]

_TITLES = {
    "external_object": "External objects",
    "information_product": "Information products",
    "situated_state": "Situated state",
}


def context_text(state: CarryState, *, name: str, carriers: bool = True, ec: bool = True) -> str:
    """The context message for ``state`` (steps before ``state.cut`` retired)."""
    lines = [
        f"[CarryOn context ({name}): steps 0-{state.cut - 1} are retired from this view; "
        "restore(step=N) shows any of them verbatim]"
    ]
    if carriers:
        lines += ["", "# Continuation carriers"]
        lines += _carriers(state.carriers) or ["(none yet)"]
    if ec:
        lines += ["", "# Execution context", *_context(state.ec)]
    return "\n".join(lines)


def _carriers(carriers: Iterable[Carrier]) -> list[str]:
    out: list[str] = []
    for kind, title in _TITLES.items():
        group = [c for c in carriers if c.kind == kind]
        if group:
            out.append(f"## {title}")
            for carrier in group:
                out += _carrier(carrier)
    return out


def _carrier(c: Carrier) -> list[str]:
    head = f"### {c.name} [{c.id}, v{c.version}]"
    lines = [head]
    if c.location:
        lines.append(f"location: {c.location}")
    if c.anchor:
        lines.append(f"anchor: {c.anchor}")
    for label, text in (("progress", c.progress), ("state", c.state)):
        if text:
            lines.append(f"{label}: {text}")
    for claim in c.claims:
        value = f" = {claim.value}" if claim.value else ""
        lines.append(
            f"- [{claim.id}] {claim.proposition}{value} (steps {_steps(claim.source_steps)})"
        )
    for label, text in (("use when", c.conditions), ("scope", c.scope), ("check", c.grounding)):
        if text:
            lines.append(f"{label}: {text}")
    lines.append(f"from steps: {_steps(c.provenance)}")
    return lines


def _context(ec: ExecutionContext) -> list[str]:
    lines = [f"focus: {ec.focus or '-'}", f"continuity: {ec.continuity or '-'}"]
    lines += [f"constraint: {c}" for c in ec.constraints]
    lines.append(f"next: {ec.continuation or '-'}")
    open_ = ec.open_obligations
    if open_:
        lines.append("open obligations:")
        lines += [f"{k}. {o.text} (steps {_steps(o.source_steps)})" for k, o in enumerate(open_, 1)]
    for o in ec.obligations:
        if o.status == "claimed_resolved":
            lines.append(f"claimed resolved: {o.text} (evidence steps {_steps(o.evidence_steps)})")
    return lines


def _steps(steps: Iterable[int]) -> str:
    return ", ".join(str(s) for s in steps) or "-"
