"""One CarryOn fold: tracker, grounder, compiler, validation, one record.

An accepted record holds the whole new state, so appending it (one store transaction) is the
atomic commit; a refused one holds the stage that refused and why, and changes nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from contextfold.core.folds import FoldCall, FoldRecord
from contextfold.core.history import History
from contextfold.strategies.carryon import prompts
from contextfold.strategies.carryon.commit import Compiled, Refused, Rules, compile_state
from contextfold.strategies.carryon.digest import digest, digests
from contextfold.strategies.carryon.grounder import NO_WORKSPACE, Check, Grounder, combine
from contextfold.strategies.carryon.registry import merge_candidates
from contextfold.strategies.carryon.schemas import CompilerOutput, TrackerOutput
from contextfold.strategies.carryon.state import Candidate, CarryState, state_from_log
from contextfold.strategies.folding.folder import Folder

__all__ = ["Pipeline", "Switches"]

_LAST_STEPS = 3
"""The tail's latest steps always go to the compiler (the execution context needs them)."""


@dataclass(frozen=True, slots=True)
class Switches:
    carriers: bool = True
    ec: bool = True
    ungrounded: bool = True
    """Without a workspace, external objects compile marked unverified (else: never)."""
    tracker_tokens: int = 2048
    compiler_tokens: int = 8192
    digest_tokens: int = 250
    """Most tokens of one tail step the tracker reads (its digest)."""


@dataclass(slots=True)
class _Run:
    calls: list[FoldCall] = field(default_factory=list)
    raw: str = ""
    stage: str = "tracker"
    checks: list[Check] = field(default_factory=list)


class Pipeline:
    """Runs one fold of the live tail and returns its record.

    :meth:`run` folds the live tail ``[cut, end)``. The tracker reads a digest of every tail step
    (:mod:`~contextfold.strategies.carryon.digest`: at most ``digest_tokens`` each, shrunk so the
    whole tail fits one call; only a tail too long even at the digests' floor takes more calls) and
    updates its candidate registry; the grounder checks the external objects it touched; the
    compiler reads the committed state, the touched candidates with their verdicts and the evidence
    steps (each cut the same way to its share of the folder's context when they do not all fit),
    and writes the carrier updates and the execution context.
    """

    def __init__(self, name: str, folder: Folder, grounder: Grounder, switches: Switches):
        self.name, self.folder, self.grounder, self.switches = name, folder, grounder, switches

    def run(self, history: History, state: CarryState, end: int) -> FoldRecord:
        tail = range(state.cut, end)
        run = _Run()
        try:
            compiled = self._fold(history, state, tail, run)
        except Refused as exc:
            refused = {"stage": run.stage, "raw": run.raw, "grounding": _checks(run.checks)}
            return self._record(history, tail, False, refused, str(exc), run)
        output: dict[str, Any] = {
            "state": compiled.state.to_output(),
            "persistence": _persistence(compiled),
            "grounding": _checks(run.checks),
        }
        return self._record(history, tail, True, output, None, run)

    def _fold(self, history: History, state: CarryState, tail: range, run: _Run) -> Compiled:
        registry, touched = self._track(history, state, tail, run)
        run.stage = "grounder"
        eligible = self._ground(touched, run)
        run.stage = "compiler"
        out = self._compile(history, state, touched, eligible, run, tail)
        rules = Rules(tail, eligible, carriers=self.switches.carriers, ec=self.switches.ec)
        run.stage = "validation"
        compiled = compile_state(state, registry, out, rules)
        now, _ = state_from_log(history.folds, self.name)
        if now.commits != state.commits:  # compare-and-swap on the whole state
            raise Refused(
                f"stale state: {now.commits - state.commits} fold(s) committed while this "
                "one ran; fold again from the new state"
            )
        return compiled

    def _track(
        self, history: History, state: CarryState, tail: range, run: _Run
    ) -> tuple[tuple[Candidate, ...], list[Candidate]]:
        limit = min(self.switches.tracker_tokens, self.folder.context_tokens // 4)
        registry, touched_ids = state.candidates, set[str]()
        room = self.folder.room(prompts.TRACKER, max_tokens=limit, reserved=_registry(registry))
        if room < 256:
            raise Refused("the candidate registry leaves no room in the folder's context")
        blocks = digests(
            [history[i] for i in tail],
            chars=self.switches.digest_tokens * 4,
            limit=int(room * 0.9),
            counter=self.folder.counter,
        )
        for chunk in self.folder.chunks(blocks, room):
            text = f"Registry:\n{_registry(registry)}\n\nNew steps:\n{chunk}"
            answer = self.folder.ask(prompts.TRACKER, text, TrackerOutput, max_tokens=limit)
            run.calls += answer.calls
            run.raw = answer.raw
            if answer.value is None:
                raise Refused(f"tracker: {answer.reason}")
            registry, ids = merge_candidates(registry, answer.value, tail, at_step=len(history))
            touched_ids |= ids
        return registry, [c for c in registry if c.id in touched_ids]

    def _ground(self, touched: list[Candidate], run: _Run) -> dict[str, str]:
        """Candidate id -> grounding note, for the candidates an external object may come from."""
        eligible: dict[str, str] = {}
        for cand in touched:
            checks = self.grounder.check(cand)
            run.checks += checks
            verdict = combine(checks)
            if verdict == "supported":
                eligible[cand.id] = "supported"
            elif self.switches.ungrounded and any(c.detail == NO_WORKSPACE for c in checks):
                eligible[cand.id] = "unverified (no workspace to check)"
        return eligible

    def _compile(
        self,
        history: History,
        state: CarryState,
        touched: list[Candidate],
        eligible: dict[str, str],
        run: _Run,
        tail: range,
    ) -> CompilerOutput:
        instruction = _instruction(self.switches)
        limit = min(self.switches.compiler_tokens, self.folder.context_tokens // 3)
        head = _compiler_head(state, touched, eligible)
        room = self.folder.room(instruction, max_tokens=limit, reserved=head)
        if room < 256:
            raise Refused("the committed state leaves no room in the folder's context")
        chosen = sorted({s for c in touched for s in c.steps} | set(tail[-_LAST_STEPS:]))
        share = max(room * 4 * 9 // 10 // max(len(chosen), 1), 200)
        evidence = "\n".join(digest(history[i], share) for i in chosen)
        answer = self.folder.ask(
            instruction, f"{head}\n\nEvidence steps:\n{evidence}", CompilerOutput, max_tokens=limit
        )
        run.calls += answer.calls
        run.raw = answer.raw
        if answer.value is None:
            raise Refused(f"compiler: {answer.reason}")
        return answer.value

    def _record(
        self,
        history: History,
        tail: range,
        accepted: bool,
        output: dict[str, Any],
        reason: str | None,
        run: _Run,
    ) -> FoldRecord:
        return FoldRecord(
            self.name,
            "carryon",
            tail.start,
            tail.stop,
            len(history),
            accepted,
            output,
            reason,
            tuple(run.calls),
        )


def _instruction(switches: Switches) -> str:
    if not switches.carriers:
        return prompts.COMPILER_EC_ONLY
    return prompts.COMPILER if switches.ec else prompts.COMPILER_CARRIERS_ONLY


def _registry(registry: tuple[Candidate, ...]) -> str:
    if not registry:
        return "(empty)"
    return "\n".join(
        json.dumps(c.model_dump(include={"id", "type", "description", "location", "version"}))
        for c in registry
    )


def _compiler_head(state: CarryState, touched: list[Candidate], eligible: dict[str, str]) -> str:
    carriers = [c.model_dump(mode="json", exclude_defaults=True) for c in state.carriers]
    fields = {"id", "type", "description", "location", "version", "steps"}
    cands = [
        {**c.model_dump(include=fields), "compilable": _compilable(c, eligible)} for c in touched
    ]
    return (
        f"Carriers now:\n{json.dumps(carriers)}\n\n"
        f"Execution context now:\n{state.ec.model_dump_json()}\n\n"
        f"Candidates to compile:\n{json.dumps(cands)}"
    )


def _compilable(cand: Candidate, eligible: dict[str, str]) -> str:
    if cand.type != "external_object":
        return "yes"
    return (
        f"yes, {eligible[cand.id]}"
        if cand.id in eligible
        else "no: the grounder did not support it"
    )


def _checks(checks: list[Check]) -> list[dict[str, Any]]:
    return [
        {
            "candidate": c.candidate,
            "version": c.version,
            "predicate": c.predicate,
            "verdict": c.verdict,
            "detail": c.detail,
        }
        for c in checks
    ]


def _persistence(compiled: Compiled) -> dict[str, int]:
    p = compiled.persistence
    return {
        "retained": p.retained,
        "updated": p.updated,
        "added": p.added,
        "retired": p.retired,
        "obligations_dropped": compiled.obligations_dropped,
    }
