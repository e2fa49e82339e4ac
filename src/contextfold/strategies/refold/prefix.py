"""Rendering of the settled prefix (the steps before the boundary) with ReFold's operators.

Every stub names its step and ``restore(step=N)``, so nothing removed here is unrecoverable; a
restore does not bring a step back here (its result, at the end of the prompt, shows the
original), so the cached prefix stays as it is.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from contextfold.core.history import History, Step
from contextfold.core.messages import AssistantMessage, SystemMessage, ToolMessage
from contextfold.core.view import Elision, Provenance, RestorePath, View, ViewBuilder
from contextfold.strategies.refold.entries import Entry
from contextfold.strategies.refold.markers import parse_markers
from contextfold.strategies.refold.own import settle_agent
from contextfold.strategies.refold.policy import fold_summary
from contextfold.strategies.refold.repeats import Repeats, repeat_stub
from contextfold.strategies.refold.spans import SeenOutputs
from contextfold.strategies.supersede import resource_key, superseded_stub

__all__ = [
    "Operators",
    "PrefixRenderer",
    "SessionState",
    "groups_of",
    "label",
    "labelled",
    "restores_only",
]


@dataclass(frozen=True, slots=True)
class Operators:
    fold: bool = True
    supersede: bool = True
    mask: bool = False
    dedup: bool = True
    spans: bool = True
    min_run: int = 8
    notes: bool = False
    """The agent's own text of a settled step becomes a note (:mod:`.policy`)."""
    thinking: bool = False
    """A settled step's thinking is left out (:mod:`.own`)."""
    inputs: int = 0
    """A settled step's call arguments longer than this many characters are left out
    (:mod:`.own`; 0: none)."""


@dataclass(slots=True)
class SessionState:
    """What refold learns from the history as it grows (reset for another history)."""

    stale: set[int] = field(default_factory=set)
    progress: dict[int, str] = field(default_factory=dict)
    keys: dict[tuple[int, str], str] = field(default_factory=dict)
    """Resource key of each (step, tool call id)."""
    latest: dict[str, int] = field(default_factory=dict)
    """Latest step that ran each resource key."""
    observations: list[int] = field(default_factory=list)
    """Steps with tool outputs, in order (restores aside: the window counts the others)."""
    malformed_markers: int = 0

    def learn(self, step: Step, *, supersede: bool) -> list[int]:
        """Take in one new step; returns the earlier steps whose rendering it changes (a call
        that re-runs theirs, a STALE marker naming them)."""
        head = step.message
        if not isinstance(head, AssistantMessage):
            return []
        changed = []
        for call in head.tool_calls:
            self.keys[step.index, call.id] = key = resource_key(call)
            older = self.latest.get(key)
            self.latest[key] = step.index
            if older is not None and supersede:
                changed.append(older)
        markers = parse_markers(head.content)
        self.malformed_markers += markers.malformed
        if step.results and not restores_only(head):  # what a restore brought back is kept
            self.observations.append(step.index)
        if markers.progress:
            self.progress[step.index] = markers.progress
        for stale in markers.stale:
            if stale < step.index and stale not in self.stale:
                self.stale.add(stale)
                changed.append(stale)
        return changed


def restores_only(head: AssistantMessage) -> bool:
    """Whether every call of ``head`` is a ``restore`` (false without calls)."""
    if not head.tool_calls:
        return False
    return all(call.name == "restore" for call in head.tool_calls)


def label(step: int, message: ToolMessage) -> ToolMessage:
    """The output labelled with its step number, so stubs and restores can point at it."""
    return ToolMessage(f"[step {step}]\n{message.content}", message.tool_call_id, name=message.name)


def _restore(step: int) -> RestorePath:
    return RestorePath.step(step)


class PrefixRenderer:
    """Renders one step at a time for the settled prefix; kept for the whole session.

    Outputs shown in full are indexed for dedup. Steps are first rendered in order; a step is
    rendered again when it is folded or superseded later, and then leaves the index
    if it is no longer shown in full: the steps whose stubs pointed to it are returned, to be
    rendered again too, so a dedup stub always points to an output the view shows.

    Per step, in order: a user step stays verbatim; an agent step marked stale becomes a one-line
    note carrying its PROGRESS text (fold); otherwise its text becomes a note with its calls kept
    (notes; :mod:`.policy`), its thinking and long inputs left out (:mod:`.own`), and each tool
    output is replaced by a stub when
    masking is on (mask; not an output the agent came back to, see :mod:`.reach`), when a later
    step re-ran the same call (supersede), or when an earlier output already shows the same text
    (dedup), and else shortened where runs of lines repeat an earlier output (span dedup).
    """

    def __init__(
        self,
        history: History,
        state: SessionState,
        ops: Operators,
        *,
        keep: Collection[int] = (),
        repeats: Repeats | None = None,
    ) -> None:
        self.history, self.state, self.ops = history, state, ops
        self.keep = keep
        """Steps never masked (the agent came back to them)."""
        self.repeats = repeats
        """Outputs stubbed as repeats when they arrived (:mod:`.repeats`): rendered here with
        the same stub; the outputs they point at are never masked, nor superseded by them."""
        self.min_mask = 0
        """Outputs of fewer tokens are not masked (their restore risk outweighs the saving)."""
        self.plain_before = 0
        """Outputs of steps before this one are shown as recorded, without a label: steps
        before the first one the first advance changes (labelling them would rewrite them)."""
        self.seen = SeenOutputs(min_run=ops.min_run)
        self._pointers: dict[int, set[int]] = {}  # step -> steps whose stubs point to it

    def render(self, step: int, entries: Sequence[Entry]) -> tuple[ViewBuilder, set[int]]:
        """The settled rendering of one step, and the steps to render again because they
        pointed at this one and it is no longer shown in full."""
        out = ViewBuilder()
        self.seen.forget(step)
        if self._folds(step):
            self._fold(step, entries, out)
        else:
            for entry in entries:
                self._entry(step, entry, out)
        if step in self.seen.indexed:
            return out, set()
        return out, self._pointers.pop(step, set())

    def _folds(self, step: int) -> bool:
        state = self.state
        return self.ops.fold and step in state.stale and self.history[step].kind == "assistant"

    def _fold(self, step: int, entries: Sequence[Entry], out: ViewBuilder) -> None:
        head = self.history[step].message
        summary = fold_summary(head.content, self.state.progress.get(step))
        note = AssistantMessage(f"[step {step} folded] {summary}")
        tokens = self.history.count(note)
        out.add(note, tokens, Provenance((step,), "transformed"))
        removed = sum(t for _, t, _ in entries) - tokens
        out.elide(Elision((step,), "fold", max(removed, 0), _restore(step)))

    def _entry(self, step: int, entry: Entry, out: ViewBuilder) -> None:
        msg, tokens, prov = entry
        if isinstance(msg, AssistantMessage):
            self._agent(step, entry, out)
            return
        if not isinstance(msg, ToolMessage):
            out.add(msg, tokens, prov)
            return
        stub, reason = self._stub(step, msg, tokens)
        kept = self.history.count(stub) if stub is not None else 0
        if stub is None or kept >= tokens:  # a stub no shorter than the output saves nothing
            if self.ops.dedup or self.ops.spans:
                self.seen.add(step, msg.content)
            if step < self.plain_before:
                out.add(msg, tokens, prov)
                return
            shown = label(step, msg)
            out.add(shown, self.history.count(shown), Provenance((step,), "transformed"))
            return
        out.add(stub, kept, Provenance(prov.steps, "transformed"))
        out.elide(Elision((step,), reason, tokens - kept, _restore(step)))

    def _agent(self, step: int, entry: Entry, out: ViewBuilder) -> None:
        """The agent's message: without its thinking and long inputs, its text a note, as
        the operators say (:mod:`.own`); a step that only restores keeps its message (nothing
        to say there)."""
        msg, tokens, prov = entry
        assert isinstance(msg, AssistantMessage)
        ops = self.ops
        if restores_only(msg):
            out.add(msg, tokens, prov)
            return
        shown, kept, elisions = settle_agent(
            step,
            msg,
            tokens,
            thinking=ops.thinking,
            inputs=ops.inputs,
            notes=ops.notes,
            progress=self.state.progress.get(step),
            count=self.history.count,
        )
        out.add(shown, kept, Provenance(prov.steps, "transformed") if elisions else prov)
        for elision in elisions:
            out.elide(elision)

    def _stub(self, step: int, msg: ToolMessage, tokens: int) -> tuple[ToolMessage | None, str]:
        state, ops = self.state, self.ops
        repeats = self.repeats
        repeated = repeats.stub(step, msg.tool_call_id) if repeats else None
        if repeated is not None:  # stubbed when it arrived: the same stub, the prefix unchanged
            return repeated, "repeat"
        kept = step in self.keep or (repeats is not None and step in repeats.kept)
        # before supersede: a masked output's stub never changes afterwards
        if ops.mask and not kept and tokens >= self.min_mask:
            lines = self._own(step, msg).content.count("\n") + 1  # not the cut rendering's
            text = f"[step {step}] output omitted ({lines} lines); {_restore(step)} shows it"
            return _stub(msg, text), "mask"
        newer = state.latest.get(state.keys.get((step, msg.tool_call_id), ""), -1)
        own = repeats is not None and step in repeats.pointed(newer)  # its repeat: keep it
        if ops.supersede and newer > step and not own:
            return _stub(msg, superseded_stub(step, newer, msg.name)), "supersede"
        same = self.seen.whole(msg.content) if ops.dedup else None
        if same is not None and same != step and msg.content:
            self._pointers.setdefault(same, set()).add(step)
            return repeat_stub(step, same, msg), "dedup"
        spans = self.seen.spans(msg.content, exclude=step) if ops.spans else None
        if spans is not None:
            for source in spans.sources:
                self._pointers.setdefault(source, set()).add(step)
            return _stub(msg, f"[step {step}]\n{spans.text}"), "dedup-span"
        return None, ""

    def _own(self, step: int, rendered: ToolMessage) -> ToolMessage:
        """The output as the history holds it (``rendered`` may be a cut rendering of it)."""
        results = self.history[step].results
        return next((r for r in results if r.tool_call_id == rendered.tool_call_id), rendered)


def _stub(original: ToolMessage, text: str) -> ToolMessage:
    return ToolMessage(text, original.tool_call_id, name=original.name)


def labelled(index: int, entry: Entry, history: History) -> Entry:
    msg, _, prov = entry
    if not isinstance(msg, ToolMessage):
        return entry
    shown = label(index, msg)
    return shown, history.count(shown), Provenance(prov.steps, "transformed")


def groups_of(view: View) -> dict[int, list[Entry]]:
    groups: dict[int, list[Entry]] = {}
    last = -1
    for entry in zip(view.messages, view.tokens, view.provenance, strict=True):
        steps = entry[2].steps
        if isinstance(entry[0], SystemMessage) and not steps:
            continue
        last = steps[0] if steps else last
        groups.setdefault(last, []).append(entry)
    return groups
