"""One run's environment, served from a per-task memo of tool outputs (speed, not semantics).

A tau2 environment validates its whole database when built (about 0.25 s in airline) and the
matrix runs every task dozens of times; a run still sees exactly what a fresh environment would
have answered.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from contextfold.core.messages import Message
from contextfold.envs.tau2 import Tau2Env

__all__ = ["SessionEnv", "TaskEnvs"]

_Call = tuple[str, str, str]
"""(side, tool name, canonical JSON arguments)."""


class TaskEnvs:
    """The memo of one task's tool outputs, and its live environment.

    A tool's output depends only on the tool, its arguments and the database state, and the state
    only on the state-changing calls made before (every call that is not a read, on either side, in
    order). This keeps the output of every (state, call) seen and one live
    :class:`~contextfold.envs.tau2.Tau2Env`; a :class:`SessionEnv` asks it for each call under its
    own state. Only a call never seen in that state runs on a real environment, rebuilt and brought
    to the state by replaying its calls when the live one is elsewhere.
    """

    def __init__(self, domain: str, task_id: str) -> None:
        self.domain, self.task_id = domain, task_id
        self.live = Tau2Env(domain, task_id)
        self.state: tuple[_Call, ...] = ()
        """The calls that brought :attr:`live` to its database state."""
        self.outputs: dict[tuple[tuple[_Call, ...], _Call], str] = {}
        self.builds = 1
        kits = (self.live.tau2_env.tools, self.live.tau2_env.user_tools)
        self._reads = {
            (side, name)
            for side, kit in zip(("agent", "user"), kits, strict=True)
            if kit is not None
            for name in kit.get_tools()
            if str(kit.tool_type(name).value) == "read"
        }

    def changes_state(self, call: _Call) -> bool:
        """Whether a call may change the database (anything but a known read)."""
        return (call[0], call[1]) not in self._reads

    def output(self, state: tuple[_Call, ...], call: _Call) -> str:
        """The call's output in ``state`` (run on the live environment when not seen yet)."""
        key = (state, call)
        if key not in self.outputs:
            self.outputs[key] = self._run(state, call)
        return self.outputs[key]

    def _run(self, state: tuple[_Call, ...], call: _Call) -> str:
        if self.state != state:
            self.live, self.state = Tau2Env(self.domain, self.task_id), ()
            self.builds += 1
            for earlier in state:
                self._execute(earlier)
            self.state = state
        output = self._execute(call)
        if self.changes_state(call):
            self.state = (*state, call)
        return output

    def _execute(self, call: _Call) -> str:
        side, name, arguments = call
        run = self.live.call if side == "agent" else self.live.call_user_tool
        return run(name, json.loads(arguments))


class SessionEnv:
    """The environment of one run: the tools of a fresh tau2 episode, answered from the memo.

    Offers what the agent loop and the scripted user need of a
    :class:`~contextfold.envs.tau2.Tau2Env`: ``tools``, ``call``, ``user_tools``,
    ``call_user_tool``, ``record_user_side`` and ``user_side``.
    """

    def __init__(self, envs: TaskEnvs) -> None:
        self.envs = envs
        self.state: tuple[_Call, ...] = ()
        self._user_side: dict[int, list[Message]] = {}

    def tools(self) -> list[dict[str, Any]]:
        """The agent's tools."""
        return self.envs.live.tools()

    def user_tools(self) -> list[dict[str, Any]]:
        """The user's own tools (telecom's phone)."""
        return self.envs.live.user_tools()

    def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        """Run an agent tool in this session's state."""
        return self._call(("agent", name, _canonical(arguments)))

    def call_user_tool(self, name: str, arguments: Mapping[str, Any]) -> str:
        """Run one of the user's tools in this session's state."""
        return self._call(("user", name, _canonical(arguments)))

    def _call(self, call: _Call) -> str:
        output = self.envs.output(self.state, call)
        if self.envs.changes_state(call):
            self.state = (*self.state, call)
        return output

    def record_user_side(self, position: int, messages: Sequence[Message]) -> None:
        """Log the user's own tool traffic before the message at ``position``."""
        self._user_side.setdefault(position, []).extend(messages)

    @property
    def user_side(self) -> Mapping[int, Sequence[Message]]:
        """The user's tool traffic by position (what :meth:`record_user_side` logged)."""
        return {k: tuple(v) for k, v in self._user_side.items()}


def _canonical(arguments: Mapping[str, Any]) -> str:
    return json.dumps(dict(arguments), sort_keys=True, ensure_ascii=False)
