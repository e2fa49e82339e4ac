"""Shared by the savings tests: a store written by serve with a control group, from scripted
agents whose length is known (a real proxy in front of the scripted Chat upstream, the openai
SDK as the client)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from contextfold.testing.upstreams.chat import ScriptedServer
from tests._serve import client, serving, tool_call

READ = {
    "type": "function",
    "function": {
        "name": "read",
        "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
}
SYSTEM = "You are a coding agent. Read what you need, then answer. " * 40


def needed(task: int) -> int:
    """How many files the agent reads for ``task`` (3 to 7, seeded by the task)."""
    return random.Random(task).randint(3, 7)


def agent(extra: int) -> Any:
    """The scripted model: it reads :func:`needed` files, ``extra`` more when it is offered
    the strategy's ``restore`` tool (a treated session), then answers."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        task = int(
            next(m for m in messages if m["role"] == "user")["content"].split()[1].rstrip(":")
        )
        treated = any(t["function"]["name"] == "restore" for t in body.get("tools") or [])
        done = sum(m["role"] == "tool" for m in messages)
        if done < needed(task) + (extra if treated else 0):
            call = tool_call(f"c{done}", "read", path=f"src/f{done}.py")
            return {"role": "assistant", "content": None, "tool_calls": [call]}
        return {"role": "assistant", "content": f"Task {task} is done."}

    return reply


def run_agents(db: Path, *, sessions: int, strategy: str, extra: int, control: float) -> None:
    """``sessions`` agent sessions through ``serve --control`` into the store ``db``."""
    with (
        ScriptedServer(agent(extra)) as up,
        serving(up, db, strategy=strategy, control=control) as proxy,
    ):
        for task in range(sessions):
            sdk = client(proxy, **{"X-Contextfold-Session": f"run-{task}"})
            messages: list[Any] = [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": f"Task {task}: fix the bug."},
            ]
            while True:
                reply = sdk.chat.completions.create(
                    model="gpt-4.1", messages=messages, tools=[READ]
                )  # type: ignore[arg-type, list-item]
                message = reply.choices[0].message
                if not message.tool_calls:
                    break
                messages.append(message.model_dump(exclude_none=True))
                for call in message.tool_calls:
                    body = f"contents of {call.function.arguments} " * 30
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": body})
