"""A Claude Code log's conversations: lines linked by ``parentUuid`` into trees, one a
conversation (the session, a sidechain, a stretch after a compaction's boundary line).

A tree branches where Claude Code retried a call, where the user went back to an earlier turn,
and where lines hang off the conversation (a hook's report, a parallel call's result). The
conversation is the path from the root to the last-written leaf: the one Claude Code resumes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from contextfold.importers.claude_code.lines import Line

__all__ = ["Thread", "boundary", "threads"]


@dataclass(frozen=True, slots=True)
class Thread:
    """One conversation: every line of its tree (file order) and the path it took."""

    lines: tuple[Line, ...]
    path: tuple[Line, ...]
    """From the root to the last-written leaf."""

    @property
    def root(self) -> Line:
        return self.path[0]

    @property
    def compacted(self) -> bool:
        """Whether it starts at a compaction (it continues an earlier conversation)."""
        return boundary(self.root)


def boundary(line: Line) -> bool:
    """Whether ``line`` is a compaction's boundary: the context restarts after it."""
    return line.kind == "system" and line.data.get("subtype") == "compact_boundary"


def threads(chained: Sequence[Line]) -> list[Thread]:
    """The conversations of a file, in the order their first lines were written."""
    by_uuid = {line.uuid: line for line in chained if line.uuid is not None}
    roots: dict[str, str] = {}
    trees: dict[str, list[Line]] = {}
    for line in chained:
        if line.uuid is None:
            continue
        root = _root(line.uuid, by_uuid, roots)
        trees.setdefault(root, []).append(line)
    out = [_thread(lines, by_uuid) for lines in trees.values()]
    return sorted(out, key=lambda t: t.root.number)


def _root(uuid: str, by_uuid: dict[str, Line], roots: dict[str, str]) -> str:
    """The uuid of the first line of ``uuid``'s tree (a line whose parent is not in the file
    is a root; a loop, in a damaged file, ends at the line met twice)."""
    walked: list[str] = []
    seen: set[str] = set()
    current = uuid
    while current not in roots:
        walked.append(current)
        seen.add(current)
        parent = by_uuid[current].parent
        if boundary(by_uuid[current]) or parent not in by_uuid or parent in seen:
            roots[current] = current
            break
        current = parent
    root = roots[current]
    for step in walked:
        roots[step] = root
    return root


def _thread(lines: list[Line], by_uuid: dict[str, Line]) -> Thread:
    parents = {line.parent for line in lines}
    leaves = [line for line in lines if line.uuid not in parents] or lines
    path = [max(leaves, key=lambda x: x.number)]
    seen = {path[0].uuid}
    while not boundary(path[-1]) and (parent := path[-1].parent) in by_uuid and parent not in seen:
        seen.add(parent)
        path.append(by_uuid[parent])
    return Thread(tuple(lines), tuple(reversed(path)))
