"""mini-swe-agent trajectories (``*.traj.json``), their bash blocks read as tool calls.

mini-swe-agent runs the one bash block of each reply and answers with its output as a user
message; here the block is the assistant's ``bash`` tool call and the output its result, so
strategies see tool traffic as they would from a native agent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from contextfold.core.errors import ImportFormatError, MessageFormatError
from contextfold.core.grouping import parse_messages
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

__all__ = ["BASH_BLOCK", "FORMAT", "find_report", "read"]

BASH_BLOCK = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
"""mini-swe-agent's default ``action_regex``: a reply must hold exactly one match."""


def read(path: Path, data: Any) -> Iterator[Trajectory | ImportFormatError]:
    """The file's trajectory, or the error that stops it from being read.

    The assistant message keeps the rest of the text (the THOUGHT); the command is carried once, as
    it was sent once. A reply with no block or several is refused by mini-swe-agent with a
    format-error user message: it stays text, and the feedback stays a user step. The outcome is
    ``resolved`` from a SWE-bench ``report.json`` next to the file or at
    ``../../logs/<instance_id>/report.json`` from the file's folder (:func:`find_report`).
    """
    try:
        yield _trajectory(path, data)
    except ImportFormatError as exc:
        yield exc


def _trajectory(path: Path, data: Mapping[str, Any]) -> Trajectory:
    name = str(path)
    messages = _messages(name, data.get("messages"))
    system = messages[0] if messages and isinstance(messages[0], SystemMessage) else None
    steps = _steps(name, messages[1:] if system else messages, offset=1 if system else 0)
    instance = data.get("instance_id")
    ident = instance if isinstance(instance, str) else path.name.removesuffix(".traj.json")
    meta = _meta(path, data, _dig(data, "info") or {})
    outcome, report = _outcome(path, ident)
    if report is not None:
        meta["report"] = report
    return Trajectory(ident, name, system, steps, outcome, meta)


def _messages(name: str, raw: Any) -> list[Message]:
    if not isinstance(raw, list):
        raise ImportFormatError(name, "messages", "expected a list of messages")
    try:
        return [message for _, message in parse_messages(raw, "messages")]
    except MessageFormatError as exc:
        raise ImportFormatError(name, exc.at, exc.problem) from exc


def _steps(
    name: str, messages: Sequence[Message], *, offset: int
) -> tuple[tuple[Message, ...], ...]:
    steps: list[tuple[Message, ...]] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        after = messages[i + 1] if i + 1 < len(messages) else None
        if isinstance(message, AssistantMessage) and isinstance(after, UserMessage):
            pair = _bash_step(message, after, f"bash-{len(steps)}")
            if pair is not None:
                steps.append(pair)
                i += 2
                continue
        if not isinstance(message, UserMessage | AssistantMessage):
            problem = f"a {message.role} message inside the conversation"
            raise ImportFormatError(name, f"messages[{i + offset}]", problem)
        steps.append((message,))
        i += 1
    return tuple(steps)


def _bash_step(
    message: AssistantMessage, output: UserMessage, call_id: str
) -> tuple[AssistantMessage, ToolMessage] | None:
    """The reply as a bash call answered by ``output``, if it holds exactly one command.

    mini-swe-agent executes every such reply, so the next message is always that command's
    outcome: its ``<returncode>`` observation, a timeout notice, or (last) the submission.
    """
    if message.tool_calls:
        return None
    commands = BASH_BLOCK.findall(message.content or "")
    if len(commands) != 1:
        return None
    arguments = json.dumps({"command": commands[0].strip()}, ensure_ascii=False)
    call = ToolCall(call_id, "bash", arguments)
    thought = BASH_BLOCK.sub("", message.content or "").strip() or None
    assistant = AssistantMessage(thought, tool_calls=(call,), reasoning=message.reasoning)
    return assistant, ToolMessage(output.content, call_id, name="bash")


def _meta(path: Path, data: Mapping[str, Any], info: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"format": "mini-swe-agent", "file": path.name}
    meta["trajectory_format"] = data.get("trajectory_format")
    meta["exit_status"] = _dig(info, "exit_status")
    for key, value in (
        ("mini_version", _dig(info, "mini_version")),
        ("model", _dig(info, "config", "model", "model_name")),
    ):
        if value is not None:
            meta[key] = value
    return meta


def find_report(path: Path, instance_id: str) -> Path | None:
    """The ``report.json`` beside the trajectory, else ``../../logs/<id>/report.json``."""
    folder = path.absolute().parent
    beside = folder / "report.json"
    in_logs = folder.parent.parent / "logs" / instance_id / "report.json"
    for candidate in (beside, in_logs):
        if candidate.is_file():
            return candidate
    return None


def _outcome(path: Path, instance_id: str) -> tuple[float | None, str | None]:
    report = find_report(path, instance_id)
    if report is None:
        return None, None
    try:
        data = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None, str(report)
    if isinstance(data, Mapping) and isinstance(data.get(instance_id), Mapping):
        data = data[instance_id]  # the SWE-bench harness keys its report by instance id
    resolved = data.get("resolved") if isinstance(data, Mapping) else None
    return (float(resolved) if isinstance(resolved, bool) else None), str(report)


def _dig(data: Any, *keys: str) -> Any:
    for key in keys:
        data = data.get(key) if isinstance(data, Mapping) else None
    return data


def _claims(probe: Probe) -> bool:
    data = probe.document
    if not isinstance(data, Mapping) or "messages" not in data:
        return False
    return "trajectory_format" in data or "instance_id" in data


FORMAT = Format(
    name="mini-swe-agent",
    summary="mini-swe-agent *.traj.json: each bash block a tool call",
    suffixes=(".json",),
    claims=_claims,
    read=lambda probe: read(probe.path, probe.document),
)
