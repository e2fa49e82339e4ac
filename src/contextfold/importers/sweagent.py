"""SWE-agent trajectories (``*.traj``), each team member's conversation a session of its own.

SWE-agent's ``history`` holds every message the model saw, as role and content; the
environment's answer to an action (the observation) is the next user message. An assistant
message's action, in a fenced block, becomes a ``bash`` tool call answered by that observation
(as in the mini-swe-agent importer), so strategies see tool traffic as from a native agent.
Multi-agent runs (CodeR) name the team member of each message (``agent``): each member's
conversation is its own session, a new one at each of its system messages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contextfold.core.errors import ImportFormatError, MessageFormatError
from contextfold.core.grouping import Labeled, as_message, group_steps
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.importers.base import Trajectory
from contextfold.importers.probe import Format, Probe

__all__ = ["FENCE", "FORMAT", "find_results", "read"]

FENCE = re.compile(r"```[^\n`]*\n(.*?)\n?```", re.DOTALL)
"""A fenced block (any info string); SWE-agent's action is the one its ``action`` names."""


def read(path: Path, data: Any) -> Iterator[Trajectory | ImportFormatError]:
    """Each session of the file (its members' conversations, in the order they start), or
    the error that stops the file from being read.

    The outcome is SWE-bench's: 1.0 when a ``results.json`` beside the file or in its parent
    folder lists the run's instance (the file's name) as ``resolved``, 0.0 when it lists it
    otherwise, else unknown (:func:`find_results`).
    """
    name = str(path)
    try:
        sessions = _sessions(name, data.get("history"))
    except ImportFormatError as exc:
        yield exc
        return
    ident = path.name.removesuffix(".json").removesuffix(".traj")
    outcome, results = _outcome(path, ident)
    ids = _session_ids(ident, [s.agent for s in sessions])
    for k, (session, sid) in enumerate(zip(sessions, ids, strict=True)):
        try:
            grouped = group_steps(session.messages(), system=session.system, lenient=True)
        except MessageFormatError as exc:
            yield ImportFormatError(name, exc.at, exc.problem)
            continue
        meta = _meta(path, data, session.agent, k, results)
        yield Trajectory(sid, name, grouped.system, grouped.steps, outcome, meta)


@dataclass(slots=True)
class _Session:
    """One member's conversation: its system message and its messages, labelled."""

    agent: str | None
    system: SystemMessage | None
    raw: list[tuple[str, Message, str | None]] = field(default_factory=list)
    """Each message with its label and the action it names (assistant messages only)."""

    def messages(self) -> list[Labeled]:
        """The conversation with each action that the next message answers as a tool call."""
        out: list[Labeled] = []
        i = 0
        while i < len(self.raw):
            label, message, action = self.raw[i]
            after = self.raw[i + 1][1] if i + 1 < len(self.raw) else None
            if isinstance(message, AssistantMessage) and action and isinstance(after, UserMessage):
                call_id = f"action-{label}"
                out.append((label, _with_call(message, action, call_id)))
                out.append((self.raw[i + 1][0], ToolMessage(after.content, call_id, name="bash")))
                i += 2
                continue
            out.append((label, message))
            i += 1
        return out


def _sessions(name: str, history: Any) -> list[_Session]:
    """The history split into sessions: by team member, a new one at each system message."""
    if not isinstance(history, list):
        raise ImportFormatError(name, "history", "expected a list of messages")
    sessions: list[_Session] = []
    open_: dict[str | None, _Session] = {}
    for i, raw in enumerate(history):
        label = f"history[{i}]"
        message = _message(name, label, raw)
        agent = _agent(name, label, raw)
        if isinstance(message, SystemMessage) or agent not in open_:
            system = message if isinstance(message, SystemMessage) else None
            open_[agent] = _Session(agent, system)
            sessions.append(open_[agent])
            if system is not None:
                continue
        open_[agent].raw.append((label, message, _action(raw, message)))
    return [s for s in sessions if s.raw]


def _message(name: str, label: str, raw: Any) -> Message:
    try:
        return as_message(raw)
    except MessageFormatError as exc:
        raise ImportFormatError(name, exc.under(label).at, exc.problem) from exc


def _agent(name: str, label: str, raw: Mapping[str, Any]) -> str | None:
    agent = raw.get("agent")
    if agent is not None and not isinstance(agent, str):
        problem = f"expected the team member's name, got {type(agent).__name__}"
        raise ImportFormatError(name, f"{label}.agent", problem)
    return agent


def _action(raw: Mapping[str, Any], message: Message) -> str | None:
    """The command an assistant message runs: its ``action``, else its only fenced block."""
    if not isinstance(message, AssistantMessage) or message.tool_calls:
        return None
    action = raw.get("action")
    if isinstance(action, str) and action.strip():
        return action.strip()
    blocks = FENCE.findall(message.content or "")
    return blocks[0].strip() if len(blocks) == 1 and blocks[0].strip() else None


def _with_call(message: AssistantMessage, action: str, call_id: str) -> AssistantMessage:
    """The message with its action as a ``bash`` call; the block that held it leaves the text
    (the command is carried once, as it was sent once)."""
    text = message.content or ""
    blocks = [m for m in FENCE.finditer(text) if m.group(1).strip() == action]
    if blocks:
        last = blocks[-1]
        text = text[: last.start()] + text[last.end() :]
    arguments = json.dumps({"command": action}, ensure_ascii=False)
    call = ToolCall(call_id, "bash", arguments)
    return AssistantMessage(text.strip() or None, tool_calls=(call,), reasoning=message.reasoning)


def _session_ids(ident: str, agents: Sequence[str | None]) -> list[str]:
    """``INSTANCE/MEMBER``, with ``-N`` for a member's N-th session (N from 2)."""
    seen: dict[str | None, int] = {}
    out = []
    for agent in agents:
        seen[agent] = seen.get(agent, 0) + 1
        base = f"{ident}/{agent}" if agent else ident
        out.append(base if seen[agent] == 1 else f"{base}-{seen[agent]}")
    return out


def _meta(
    path: Path, data: Mapping[str, Any], agent: str | None, session: int, results: str | None
) -> dict[str, Any]:
    meta: dict[str, Any] = {"format": "swe-agent", "file": path.name, "session": session}
    if agent is not None:
        meta["agent"] = agent
    info = data.get("info")
    if isinstance(info, Mapping) and info.get("exit_status") is not None:
        meta["exit_status"] = info["exit_status"]
    if isinstance(data.get("environment"), str):
        meta["environment"] = data["environment"]
    if results is not None:
        meta["results"] = results
    return meta


def find_results(path: Path) -> Path | None:
    """The SWE-bench ``results.json`` beside the trajectory, else in its parent folder."""
    folder = path.absolute().parent
    for candidate in (folder / "results.json", folder.parent / "results.json"):
        if candidate.is_file():
            return candidate
    return None


def _outcome(path: Path, instance_id: str) -> tuple[float | None, str | None]:
    found = find_results(path)
    if found is None:
        return None, None
    try:
        data = json.loads(found.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None, str(found)
    if not isinstance(data, Mapping):
        return None, str(found)
    lists = [v for v in data.values() if isinstance(v, list)]
    if instance_id in (data.get("resolved") or ()):
        return 1.0, str(found)
    if any(instance_id in v for v in lists):
        return 0.0, str(found)
    return None, str(found)


def _claims(probe: Probe) -> bool:
    data = probe.document
    return isinstance(data, Mapping) and "history" in data and "trajectory" in data


FORMAT = Format(
    name="swe-agent",
    summary="SWE-agent *.traj: each team member's conversation a session",
    suffixes=(".traj", ".json"),
    claims=_claims,
    read=lambda probe: read(probe.path, probe.document),
)
