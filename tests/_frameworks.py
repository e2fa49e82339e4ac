"""Shared by the framework adapters' tests: a short tool-using agent played by a scripted
OpenAI-compatible server, and the checks that the model was sent the view.

The scripted model runs ``bash`` five times (each output 300 lines, so the history grows far
past the budget), then calls the strategy's ``restore`` for the first output, then answers
with that output's first line; a later user message gets a short answer. It decides from the
last message it is sent (the call id of a tool result), so it does not depend on what the
view kept of the earlier ones.
"""

from __future__ import annotations

import json
from typing import Any

from contextfold.session import Prepared

BUDGET = 3_000
"""Far under the history the agent makes (about 12,000 tokens), far over the view."""
CALLS = 5
TASK = "List the five directories and tell me what the first one held."
SYSTEM = "You are a terse shell agent."


def bash_output(command: str) -> str:
    """What the agent's ``bash`` tool returns: a long listing naming its command."""
    lines = (f"line {i} of the listing of {command}" for i in range(300))
    return f"output of {command}\n" + "\n".join(lines)


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    fn = {"name": name, "arguments": json.dumps(arguments)}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": fn}],
    }


def agent_reply(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model (see the module docstring)."""
    last = body["messages"][-1]
    done = last.get("tool_call_id") if last["role"] == "tool" else None
    if done is None and last["content"] != TASK:  # a later turn: a short answer
        return {"role": "assistant", "content": f"noted: {last['content']}"}
    if done is None:
        return _call("c0", "bash", {"command": "ls dir0"})
    if done == "restore-1":
        first = str(last["content"]).split("output of ", 1)[-1].splitlines()[0]
        return {"role": "assistant", "content": f"The first held: {first}"}
    k = int(done.removeprefix("c")) + 1
    if k < CALLS:
        return _call(f"c{k}", "bash", {"command": f"ls dir{k}"})
    return _call("restore-1", "restore", {"step": 1})


def final_answer() -> str:
    return "The first held: ls dir0"


def sent(server_requests: list[tuple[dict[str, str], dict[str, Any]]]) -> list[dict[str, Any]]:
    """The messages of the model's last request."""
    return list(server_requests[-1][1]["messages"])


def shape(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Each message's role and text (what a framework's conversion must keep)."""
    return [(m["role"], str(m.get("content") or "")) for m in messages]


def assert_the_view_was_sent(request: list[dict[str, Any]], last: Prepared) -> None:
    """The model's last request is the view the session prepared, not the history: the first
    output is a stub there, restored whole by ``restore``, and the request is a fraction of
    the history's size."""
    assert shape(request) == shape(last.messages)
    assert last.full_tokens > 3 * last.tokens and last.tokens <= BUDGET
    outputs = {m["tool_call_id"]: str(m["content"]) for m in request if m["role"] == "tool"}
    assert "line 299" not in outputs["c0"] and "restore(step=1)" in outputs["c0"]
    assert "line 299 of the listing of ls dir0" in outputs["restore-1"]
    assert last.view.elisions and all(e.recoverable for e in last.view.elisions)


def assert_whole(texts: list[str]) -> None:
    """The framework's own record holds every output in full."""
    for k in range(CALLS):
        assert any(bash_output(f"ls dir{k}") in text for text in texts), k
