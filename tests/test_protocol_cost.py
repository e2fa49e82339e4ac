"""The protocol benchmark's harness on a small session built here: the requests it makes are
accepted by the scripted upstream of each API, carry Claude Code's breakpoints, and a route
that is a second direct upstream costs exactly what direct costs."""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

import httpx
from rich.console import Console

from benchmarks._wire import messages_body, responses_body, tool_names
from benchmarks.protocol_cost import APIS, Next, Route, calls, measure
from contextfold.core.messages import from_openai
from contextfold.importers.base import Trajectory

SYSTEM = "You are a coding agent. Use bash. " * 60


def _session(turns: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": "Find the bug in m.py."}]
    for n in range(turns):
        call = {"id": f"call-{n}", "type": "function"}
        call["function"] = {"name": "bash", "arguments": f'{{"command": "cat m{n}.py"}}'}
        out.append({"role": "assistant", "content": f"Reading m{n}.py.", "tool_calls": [call]})
        out.append({"role": "tool", "tool_call_id": f"call-{n}", "content": f"x = {n}\n" * 40})
    out.append({"role": "assistant", "content": "The bug is in m2.py."})
    return out


def _trajectory(conversation: list[dict[str, Any]]) -> Trajectory:
    steps: list[tuple[Any, ...]] = []
    for m in conversation:
        message = from_openai(m)
        if m["role"] == "tool":
            steps[-1] = (*steps[-1], message)
        else:
            steps.append((message,))
    system = from_openai({"role": "system", "content": SYSTEM})
    return Trajectory("t1", "built", system, tuple(steps))


def test_each_request_is_accepted_by_its_api_and_carries_claude_codes_breakpoints() -> None:
    conversation = _session(3)[:-1]
    tools = tool_names(conversation)
    body = messages_body(SYSTEM, conversation, tools)
    marked = [
        (i, j)
        for i, m in enumerate(body["messages"])
        for j, block in enumerate(m["content"])
        if "cache_control" in block
    ]
    assert marked == [(len(body["messages"]) - 1, 0)]  # the newest block, a tool_result
    assert "cache_control" in body["system"][0] and tools == ["bash"]
    api = APIS["messages"]
    with api.upstream(Next()) as up:
        reply = httpx.post(up.root + api.path, json=body, headers=api.headers)
    assert reply.status_code == 200, reply.text
    api = APIS["responses"]
    with api.upstream(Next()) as up:
        body = responses_body(SYSTEM, conversation, tools)
        reply = httpx.post(up.root + api.path, json=body, headers=api.headers)
    assert reply.status_code == 200, reply.text
    assert [i.get("type", "message") for i in body["input"]][:3] == [
        "message",
        "message",
        "function_call",
    ]


def test_a_second_direct_upstream_as_the_via_route_costs_exactly_direct() -> None:
    traj = _trajectory(_session(6))
    assert len(list(calls(traj))) == 7
    for name, api in APIS.items():
        with ExitStack() as stack:
            routes = []
            for label in ("direct", "via"):
                reply = Next()
                up = stack.enter_context(api.upstream(reply, min_cache_tokens=256))
                routes.append(Route(label, up.root, up, reply))
            results = measure(
                api,
                {"built": [traj]},
                routes,
                stream=name == "responses",
                console=Console(quiet=True),
            )
        direct, via = results["built"]["direct"], results["built"]["via"]
        assert direct.calls == via.calls == 7
        assert direct.cost == via.cost and direct.cost[api.prices] > 0
        assert 0.5 < direct.read_share[api.prices] < 1  # later calls read the earlier prefix
        assert routes[1].upstream.calls[-1] == routes[0].upstream.calls[-1]
