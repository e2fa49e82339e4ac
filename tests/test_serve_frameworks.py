"""The frameworks on their Responses defaults through contextfold serve: the OpenAI Agents SDK's
``OpenAIResponsesModel`` and LangChain's ``ChatOpenAI(use_responses_api=True)``, each running
a tool-using agent against a scripted Responses upstream (a real HTTP server on 127.0.0.1).

The scripted model runs ``bash`` three times (long outputs, which refold cuts as they arrive),
then calls the proxy's ``restore`` on the step the first output's stub names and answers
with a line only the restored output holds: the answer needs what the proxy's own tool gave
back, and the framework never sees that tool.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from agents import Agent, OpenAIResponsesModel, RunConfig, Runner, function_tool
from langchain.agents import create_agent
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from openai import AsyncOpenAI

from contextfold.core.store import open_store
from contextfold.testing.upstreams.responses import ScriptedResponses, function_call, message
from tests._frameworks import SYSTEM, bash_output
from tests._protocols import CLIENT_KEY, TOKEN, proxy_for, sessions

TASK = "List three directories and tell me what the first one held."
CALLS = 3
ANSWER = "The first held: line 150 of the listing of ls dir0"


def model(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The scripted model (see the module docstring): it reads the newest item, and the first
    output's stub when it restores."""
    items = body["input"]
    last = items[-1]
    done = last.get("call_id") if last.get("type") == "function_call_output" else None
    if done is None:
        return [function_call("bash", {"command": "ls dir0"}, call_id="c0")]
    if done == "restore-1":
        held = [x for x in str(last["output"]).splitlines() if x.startswith("line 150 ")]
        return [message(f"The first held: {held[0] if held else 'not restored'}")]
    k = int(done.removeprefix("c")) + 1
    if k < CALLS:
        return [function_call("bash", {"command": f"ls dir{k}"}, call_id=f"c{k}")]
    first = next(x["output"] for x in items if x.get("type") == "function_call_output")
    stub = re.search(r"restore\(step=(\d+)", str(first))
    step = int(stub.group(1)) if stub else 0
    return [function_call("restore", {"step": step}, call_id="restore-1")]


def _client(proxy: Any) -> AsyncOpenAI:
    headers = {"X-Contextfold-Token": TOKEN}
    return AsyncOpenAI(
        base_url=str(proxy.url), api_key=CLIENT_KEY, max_retries=0, default_headers=headers
    )


def _checks(up: ScriptedResponses, store: Path) -> None:
    """The upstream was sent the strategy's view (an output cut, ``restore`` offered), the
    restore round stayed between the proxy and the model, and the run is one session."""
    bodies = [r.body for r in up.requests]
    assert len(bodies) == CALLS + 2  # the bash calls, the restore round, the answer
    assert all("restore" in [t["name"] for t in b.get("tools") or []] for b in bodies[:-1])
    outputs = [i["output"] for i in bodies[-2]["input"] if i.get("type") == "function_call_output"]
    assert len(outputs) == CALLS and "line 150 " not in outputs[0]  # cut as it arrived
    answered = bodies[-1]["input"][-1]
    assert answered["call_id"] == "restore-1" and "line 150 " in answered["output"]
    assert len(sessions(store)) == 1


@function_tool
def bash(command: str) -> str:
    """Run a shell command."""
    return bash_output(command)


def test_the_agents_sdk_default_model_runs_through_the_proxy(tmp_path: Path) -> None:
    with (
        ScriptedResponses(model) as up,
        proxy_for(up, "responses", tmp_path / "s.db") as proxy,
    ):
        agent = Agent(
            name="shell",
            instructions=SYSTEM,
            model=OpenAIResponsesModel(model="gpt-test", openai_client=_client(proxy)),
            tools=[bash],
        )
        result = Runner.run_sync(agent, TASK, run_config=RunConfig(tracing_disabled=True))
    assert result.final_output == ANSWER
    names = [getattr(i.raw_item, "name", None) for i in result.new_items]
    assert "restore" not in names and names.count("bash") == CALLS
    _checks(up, tmp_path / "s.db")


@tool("bash")
def lc_bash(command: str) -> str:
    """Run a shell command."""
    return bash_output(command)


def test_langchain_on_the_responses_api_runs_through_the_proxy(tmp_path: Path) -> None:
    with (
        ScriptedResponses(model) as up,
        proxy_for(up, "responses", tmp_path / "s.db") as proxy,
    ):
        chat = ChatOpenAI(
            model="gpt-test",
            base_url=str(proxy.url),
            api_key=CLIENT_KEY,
            default_headers={"X-Contextfold-Token": TOKEN},
            use_responses_api=True,
            max_retries=0,
        )
        agent = create_agent(chat, [lc_bash], system_prompt=SYSTEM)
        state = agent.invoke({"messages": [{"role": "user", "content": TASK}]})
    last = state["messages"][-1]
    assert last.text == ANSWER
    calls = [c["name"] for m in state["messages"] for c in getattr(m, "tool_calls", [])]
    assert calls == ["bash"] * CALLS
    assert json.dumps([m.model_dump() for m in state["messages"]]).count("restore") == 0
    _checks(up, tmp_path / "s.db")
    first = up.requests[0].body  # the system prompt came as an input item, and goes so
    assert "instructions" not in first and first["input"][0]["role"] == "system"
    with open_store(tmp_path / "s.db") as store:
        (record,) = [store.load_session(sid) for sid in store.list_sessions()]
    assert record.system is not None and record.system.content == SYSTEM
    assert record.steps[0].messages[0].content == TASK  # the task is the first step
