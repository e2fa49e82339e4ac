"""Long outputs cut once, as they arrive: head, tail and the lines holding a named value.

The cut is decided before the output enters any prompt and never changes, so it rewrites no
cached prompt under any price table; what it leaves out comes back by line range, so a restore
costs only the lines wanted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from contextfold.core.argvalues import call_values, text_values
from contextfold.core.history import History, Step
from contextfold.core.messages import ToolMessage, UserMessage
from contextfold.core.prepared import PreparedText, value_runs
from contextfold.core.view import Elision, Provenance, RestorePath
from contextfold.strategies.refold.entries import Entry
from contextfold.strategies.refold.prefix import restores_only

__all__ = ["BLOCK", "Trim", "Trims"]

BLOCK = 40
"""Most lines one elision of a cut gives back (a restore of a line range asks for no more)."""


@dataclass(frozen=True, slots=True)
class Trim:
    """One cut output: the message that stands for it, its tokens and what it leaves out."""

    message: ToolMessage
    tokens: int
    elisions: tuple[Elision, ...]


@dataclass(slots=True)
class Trims:
    """The cuts of one session's outputs, made as the steps arrive (one instance per session).

    An output of more than ``cut`` tokens (the only output of its step, more than one line) is cut
    to about ``cut`` tokens of whole lines: its first lines (up to a third of ``cut``), its last
    lines (up to a third), then, in order while the rest lasts, the lines holding (by the verbatim
    rule) a string value that the user's messages or the agent's calls so far name
    (:func:`~contextfold.core.argvalues.text_values`,
    :func:`~contextfold.core.argvalues.call_values`, the call that made this output included): a
    path, an identifier, an id. Each run of lines left out becomes one line, ``[lines a-b of N left
    out: restore(step=S, lines="a-b")]``, unless the run is no longer than that line; it comes back
    in blocks of at most :data:`BLOCK` lines (an elision each). The cut reads only the steps up to
    its own. An output the cut would keep three quarters of is left whole; what a restore brought
    back is never cut.
    """

    cut: int
    _named: dict[str, frozenset[bytes]] = field(default_factory=dict)
    """The string values named so far, with their alphanumeric runs."""
    _found: dict[int, Trim] = field(default_factory=dict)

    def find(self, step: Step, history: History, *, skip: bool = False) -> None:
        """Take in a new step: the values it names, then (unless ``skip``: its output is
        stubbed already) the cut of its output."""
        head = step.message
        if isinstance(head, UserMessage):
            self._learn(text_values(head.content))
            return
        self._learn(v for call in head.tool_calls for v in call_values(call))
        if skip or self.cut <= 0 or len(step.results) != 1 or restores_only(head):
            return
        if step.tokens[1] > self.cut:
            trim = self._trim(step, history)
            if trim is not None:
                self._found[step.index] = trim

    def entry(self, index: int, entry: Entry) -> Entry:
        """``entry`` of step ``index`` as the view shows it: cut, or as it is."""
        trim = self._found.get(index)
        if trim is None or not isinstance(entry[0], ToolMessage):
            return entry
        return trim.message, trim.tokens, Provenance(entry[2].steps, "transformed")

    def step_entries(self, history: History, index: int) -> list[Entry]:
        """The messages of step ``index`` as recorded, a long output as cut: what refold
        renders the step from when it renders from the history."""
        step, provenance = history[index], Provenance((index,))
        pairs = zip(step.messages, step.tokens, strict=True)
        return [self.entry(index, (message, tokens, provenance)) for message, tokens in pairs]

    def elisions(self, end: int) -> list[Elision]:
        """What the cuts of the steps before ``end`` leave out."""
        return [e for step, t in self._found.items() if step < end for e in t.elisions]

    def _learn(self, values: Iterable[object]) -> None:
        for value in values:
            if isinstance(value, str) and value not in self._named:
                self._named[value] = value_runs(value)

    def _trim(self, step: Step, history: History) -> Trim | None:
        output = step.results[0]
        lines = output.content.splitlines()
        if len(lines) < 2:
            return None
        tokens = step.tokens[1]
        keep = _kept(lines, tokens, self.cut, self._holding(output.content, lines))
        keep |= _short_gaps(lines, sorted(keep), step.index)
        if len(keep) == len(lines):
            return None
        text = "\n".join(_with_markers(lines, sorted(keep), step.index))
        message = ToolMessage(text, output.tool_call_id, name=output.name)
        kept = history.count(message)
        if kept > tokens * 3 // 4:
            return None
        gaps = _gaps(len(lines), sorted(keep))
        return Trim(message, kept, _elided(step.index, lines, gaps, tokens - kept))

    def _holding(self, content: str, lines: Sequence[str]) -> set[int]:
        """The lines (from 0) holding a named value."""
        whole = PreparedText(content)
        present = [(v, v.lower(), r) for v, r in self._named.items() if r and whole.holds(v, r)]
        if not present:
            return set()
        out = set()
        for no, line in enumerate(lines):
            low = line.lower()
            found = [(v, r) for v, lowered, r in present if lowered in low]
            if found and any(PreparedText(line).holds(v, r) for v, r in found):
                out.add(no)
        return out


def _kept(lines: Sequence[str], tokens: int, cut: int, named: set[int]) -> set[int]:
    """The lines (from 0) kept within about ``cut`` tokens: the first lines up to a third of
    it, the last lines up to a third, then the ``named`` lines in order while any is left; a
    line's tokens are taken as its share of the output's characters."""
    per_char = tokens / max(sum(len(line) + 1 for line in lines), 1)
    cost = [(len(line) + 1) * per_char for line in lines]
    out: set[int] = set()
    left = float(cut)
    for order, budget in ((range(len(lines)), cut / 3), (_back(lines), cut / 3)):
        spent = 0.0
        for no in order:
            if no in out or spent + cost[no] > budget:
                break
            spent += cost[no]
            out.add(no)
        left -= spent
    for no in sorted(named - out):
        if cost[no] > left:
            break
        left -= cost[no]
        out.add(no)
    return out


def _back(lines: Sequence[str]) -> range:
    return range(len(lines) - 1, -1, -1)


def _gaps(count: int, keep: Sequence[int]) -> list[tuple[int, int]]:
    """The runs of lines left out, as (first, last) line numbers from 1."""
    gaps, previous = [], 0
    for no in [*(k + 1 for k in keep), count + 1]:
        if no - previous > 1:
            gaps.append((previous + 1, no - 1))
        previous = no
    return gaps


def _marker(step: int, first: int, last: int, count: int) -> str:
    return (
        f'[lines {first}-{last} of {count} left out: restore(step={step}, lines="{first}-{last}")]'
    )


def _short_gaps(lines: Sequence[str], keep: Sequence[int], step: int) -> set[int]:
    """The lines of the runs left out that are no longer than the marker that would stand
    for them: cutting those saves nothing."""
    out: set[int] = set()
    for first, last in _gaps(len(lines), keep):
        size = sum(len(lines[n - 1]) + 1 for n in range(first, last + 1))
        if size <= len(_marker(step, first, last, len(lines))):
            out.update(range(first - 1, last))
    return out


def _with_markers(lines: Sequence[str], keep: Sequence[int], step: int) -> list[str]:
    out: list[str] = []
    previous = -1
    for k in [*keep, len(lines)]:
        if k - previous > 1:
            out.append(_marker(step, previous + 2, k, len(lines)))
        if k < len(lines):
            out.append(lines[k])
        previous = k
    return out


def _elided(
    step: int, lines: Sequence[str], gaps: Sequence[tuple[int, int]], removed: int
) -> tuple[Elision, ...]:
    """One elision per block of at most :data:`BLOCK` lines of each gap, the tokens left
    out shared by their characters."""
    blocks = [
        (first, min(first + BLOCK - 1, last))
        for start, last in gaps
        for first in range(start, last + 1, BLOCK)
    ]
    sizes = [sum(len(lines[n - 1]) + 1 for n in range(a, b + 1)) for a, b in blocks]
    total = max(sum(sizes), 1)
    shares = [removed * size // total for size in sizes]
    shares[-1] += removed - sum(shares)
    return tuple(
        Elision(
            (step,), "trim", share, RestorePath("restore", (("step", step), ("lines", f"{a}-{b}")))
        )
        for (a, b), share in zip(blocks, shares, strict=True)
    )
