"""Observation dedup: whole outputs and runs of lines that an earlier output already shows.

:class:`SeenOutputs` indexes the outputs displayed in full, in step order. ``whole(text)`` names
the step that already shows exactly this text; ``spans(text)`` replaces every run of at least
``min_run`` consecutive lines that an earlier output shows in the same order with a one-line
pointer to it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

__all__ = ["SeenOutputs", "Spans"]


@dataclass(frozen=True, slots=True)
class Spans:
    text: str
    removed_lines: int
    sources: set[int]
    """Steps the pointers point to."""


_Key = tuple[int, int]
"""(step, output number within the step)."""

_MIN_LINE = 4
"""Shorter lines (blank, braces, ``fi``) never start a run: they repeat by chance."""


@dataclass(slots=True)
class SeenOutputs:
    min_run: int = 8
    _whole: dict[str, int] = field(default_factory=dict)
    _first: dict[str, tuple[_Key, int]] = field(default_factory=dict)
    _lines: dict[_Key, list[str]] = field(default_factory=dict)
    _outputs: dict[int, int] = field(default_factory=dict)  # step -> outputs indexed

    def add(self, step: int, text: str) -> None:
        """Record an output displayed in full at ``step`` (a step may have several)."""
        self._whole.setdefault(text, step)
        key = (step, self._outputs.get(step, 0))
        self._outputs[step] = key[1] + 1
        self._lines[key] = lines = text.split("\n")
        for no, line in enumerate(lines):
            if len(line) >= _MIN_LINE:
                self._first.setdefault(line, (key, no))

    def forget(self, step: int) -> None:
        """Stop pointing at ``step`` (its outputs are no longer shown in full)."""
        count = self._outputs.pop(step, 0)
        if not count:
            return
        self._whole = {t: s for t, s in self._whole.items() if s != step}
        for k in range(count):
            for line in set(self._lines.pop((step, k))):
                if self._first.get(line, ((-1, 0), 0))[0][0] == step:
                    del self._first[line]

    def whole(self, text: str) -> int | None:
        """The earliest step displaying exactly ``text``, if any."""
        return self._whole.get(text)

    @property
    def indexed(self) -> Collection[int]:
        """Steps with an output indexed (shown in full)."""
        return self._outputs.keys()

    def spans(self, text: str, *, exclude: int = -1) -> Spans | None:
        """``text`` with runs repeated from another step's output replaced; None if none.
        ``exclude`` is the step ``text`` itself belongs to."""
        lines = text.split("\n")
        out: list[str] = []
        sources: set[int] = set()
        removed = 0
        k = 0
        while k < len(lines):
            run = self._run_at(lines, k, exclude)
            if run is None:
                out.append(lines[k])
                k += 1
                continue
            step, start, length = run
            sources.add(step)
            out.append(
                f"[... lines {k + 1}-{k + length} same as step {step} lines "
                f"{start + 1}-{start + length} ...]"
            )
            removed += length - 1
            k += length
        return Spans("\n".join(out), removed, sources) if removed else None

    def _run_at(self, lines: list[str], k: int, exclude: int) -> tuple[int, int, int] | None:
        hit = self._first.get(lines[k])
        if hit is None or hit[0][0] == exclude:
            return None
        key, start = hit
        step, source = key[0], self._lines[key]
        length = 0
        while (
            k + length < len(lines)
            and start + length < len(source)
            and lines[k + length] == source[start + length]
        ):
            length += 1
        return (step, start, length) if length >= self.min_run else None
