"""Claude Code's session logs: ``~/.claude/projects/<project>/*.jsonl`` and subagents' files.

Each conversation of a file is a trajectory (:mod:`.threads`): the session, each sidechain, each
stretch after a compaction (``#2``: the context restarted), each subagent file. Replies are
merged by message id, results put after their calls (:mod:`.conversation`) and read as serve
reads Anthropic messages (:mod:`.session`); each assistant step carries its call's billed usage.
The system prompt and tool schemas are not in logs before 2.1.3xx: ``system`` is then None.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from contextfold.core.errors import ImportFormatError
from contextfold.importers.base import Trajectory
from contextfold.importers.claude_code.conversation import conversation, replies
from contextfold.importers.claude_code.lines import Lines, parse_lines
from contextfold.importers.claude_code.session import labeled, recorded_call, system_of
from contextfold.importers.claude_code.threads import Thread, threads
from contextfold.importers.probe import Format, Item, Probe
from contextfold.importers.records import main_model
from contextfold.importers.steps import group_steps

__all__ = ["FORMAT"]

_JOURNAL = {"started", "result"}
"""The line types of a workflow's ``journal.jsonl`` (each subagent started, and its result):
Claude Code's bookkeeping beside the subagents' logs, no conversation."""


def _claims(probe: Probe) -> bool:
    """A Claude Code log: its first lines are objects with a ``type`` and Claude Code's keys."""
    return any(_ours(data) for data in probe.first_lines)


def _ours(data: Any) -> bool:
    if not isinstance(data, Mapping) or not isinstance(data.get("type"), str):
        return False
    if data["type"] in _JOURNAL:
        return "agentId" in data and "key" in data
    return "sessionId" in data or "leafUuid" in data or data["type"] == "file-history-snapshot"


def read(probe: Probe) -> Iterator[Item]:
    """Each conversation of the file, and an error for each line that could not be read."""
    lines = parse_lines(probe.name, probe.lines())
    yield from lines.errors
    segments: dict[str, int] = {}
    for thread in threads(lines.chained):
        try:
            found = _trajectory(probe, thread, lines, segments)
        except ImportFormatError as exc:
            yield exc
            continue
        if found is not None:
            yield found


def _trajectory(
    probe: Probe, thread: Thread, lines: Lines, segments: dict[str, int]
) -> Trajectory | None:
    conv = conversation(thread)
    if not conv.replies:
        return None  # nothing was asked of a model (a prompt never sent, a hook's report)
    name = probe.name
    system = system_of(name, lines.shapes, conv.replies[0].lines[0].number)
    grouped = group_steps(name, labeled(name, conv), system=system)
    calls = tuple(recorded_call(r) for r in conv.replies)
    ident = _ident(probe, thread, segments)
    segment = segments[ident]
    meta = _meta(probe, thread, lines, segment)
    left = [r for r in replies(thread).values() if r not in conv.replies]
    meta.update(
        off_path_calls=tuple(recorded_call(r) for r in left if not r.synthetic),
        orphan_results=conv.orphans,
        synthetic_replies=conv.synthetic,
    )
    if grouped.dropped_calls:
        meta["unanswered_calls_dropped"] = grouped.dropped_calls
    full_id = ident if segment == 1 else f"{ident}#{segment}"
    return Trajectory(
        full_id, name, grouped.system, grouped.steps, meta=meta,
        model=main_model(calls), calls=calls,
    )  # fmt: skip


def _ident(probe: Probe, thread: Thread, segments: dict[str, int]) -> str:
    """The session's id, with ``/agent-ID`` for a subagent's or ``/sidechain-N`` for a
    sidechain in the session's own file; each conversation after the first under the same id
    (after a compaction: the context restarted) counts a segment more."""
    data = thread.root.data
    session = data.get("sessionId")
    base = session if isinstance(session, str) else probe.path.stem
    agent = data.get("agentId")
    if isinstance(agent, str):
        base = f"{base}/agent-{agent}"
    elif data.get("isSidechain") is True:
        n = sum(1 for key in segments if key.startswith(f"{base}/sidechain-")) + 1
        base = f"{base}/sidechain-{n}"
    segments[base] = segments.get(base, 0) + 1
    return base


def _meta(probe: Probe, thread: Thread, lines: Lines, segment: int) -> dict[str, Any]:
    data = thread.root.data
    first = next((line.data for line in thread.path if "version" in line.data), data)
    meta: dict[str, Any] = {"format": "claude-code", "file": probe.path.name}
    meta.update(
        session_id=data.get("sessionId"),
        version=first.get("version"),
        cwd=first.get("cwd"),
        segment=segment,
        compacted=thread.compacted,
        sidechain=data.get("isSidechain") is True,
        lines=dict(lines.counts),
    )
    if isinstance(data.get("agentId"), str):
        meta["agent_id"] = data["agentId"]
    return meta


FORMAT = Format(
    name="claude-code",
    summary="Claude Code's ~/.claude/projects/<project>/*.jsonl, subagents too",
    suffixes=(".jsonl",),
    claims=_claims,
    read=read,
)
