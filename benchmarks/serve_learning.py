"""``serve --learn`` on recorded sessions: does the proxy learn what ``replay --learn`` learns?

    PYTHONPATH=src .venv/bin/python benchmarks/serve_learning.py ../shared/data/tau2-sierra \
        [--limit N] [--idle-end 0.5] [--json out.json]

Every recorded session is played, in order, as the requests its agent sent: each request holds
the conversation so far, and a scripted upstream answers it with the assistant message the
agent recorded next (tool results then come from the recording too, so no agent changes its
course). It is played four ways, each against a fresh
:class:`~contextfold.testing.upstreams.chat.ScriptedServer` (a vLLM-like prefix cache shared by all
sessions, as a server's is): straight to the upstream (what full history sends), through
``serve -s full`` (the proxy adds nothing: the same figures, or the harness is wrong), through
``serve`` with refold (which offers ``restore`` at every call: its schema is in every prompt),
and through ``serve --learn`` (a pause longer than ``--idle-end`` between sessions ends each
one, as a client that moves on would). Cost is priced from the
upstream's usage (prompt, cached and completion tokens) under both price tables, as a multiple
of the direct path's. ``replay`` computes the same on the same sessions without HTTP, a
server-wide cache or chat templates; the proxy's multiples are the ones a deployment sees.
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from contextfold.core.messages import AssistantMessage, to_openai
from contextfold.core.meter import PRICE_TABLES, Meter
from contextfold.importers import iter_trajectories
from contextfold.importers.base import Trajectory
from contextfold.serve import ServeConfig
from contextfold.serve.runner import ProxyThread
from contextfold.testing.upstreams.chat import ScriptedServer

TOKEN = "bench"
MODES = ("direct", "serve -s full", "serve", "serve --learn")


@dataclass(slots=True)
class Recorded:
    """The next reply the scripted upstream gives (the player sets it before each request)."""

    reply: dict[str, Any] = field(default_factory=dict)
    calls: list[tuple[int, int, int]] = field(default_factory=list)
    """(prompt, cached, completion) tokens of every call the upstream answered."""

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        return self.reply


def requests(trajectory: Trajectory) -> Iterator[tuple[list[dict[str, Any]], dict[str, Any]]]:
    """Each request the session's agent sent (the conversation so far) and its recorded reply.
    An opening the agent said before the user spoke (tau2's fixed greeting) is no request:
    the conversation starts with it."""
    messages = [to_openai(trajectory.system)] if trajectory.system else []
    for step in trajectory.steps:
        head = step[0]
        if isinstance(head, AssistantMessage) and any(m["role"] == "user" for m in messages):
            yield list(messages), to_openai(head)
        messages += [to_openai(m) for m in step]


def tools(sessions: list[Trajectory]) -> list[dict[str, Any]]:
    """The client's tools, the same for every session as a deployed agent's are: every tool
    the recorded agents called (any arguments)."""
    names = sorted(
        {
            c.name
            for trajectory in sessions
            for step in trajectory.steps
            if isinstance(step[0], AssistantMessage)
            for c in step[0].tool_calls
        }
    )
    schema = {"type": "object", "additionalProperties": True}
    return [{"type": "function", "function": {"name": n, "parameters": schema}} for n in names]


def play(sessions: list[Trajectory], mode: str, idle_end: float) -> list[tuple[int, int, int]]:
    """Play every session through ``mode`` (:data:`MODES`); the upstream's usage of every
    call."""
    recorded = Recorded()
    with ScriptedServer(recorded.answer) as up:
        if mode == "direct":
            _play_all(sessions, up, up.url, recorded, pause=0.0)
            return recorded.calls
        learn = mode == "serve --learn"
        strategy = "full" if mode == "serve -s full" else "refold"
        config = ServeConfig(
            upstream=up.url, token=TOKEN, strategy=strategy, learn=learn, idle_end=idle_end
        )
        with ProxyThread(config) as proxy:
            _play_all(sessions, up, proxy.url, recorded, pause=idle_end * 1.2 if learn else 0.0)
    return recorded.calls


def _play_all(
    sessions: list[Trajectory], up: ScriptedServer, url: str, recorded: Recorded, *, pause: float
) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    offered = tools(sessions)
    with httpx.Client(timeout=120) as http:
        for i, trajectory in enumerate(sessions):
            headers["X-Contextfold-Session"] = f"s{i}-{uuid.uuid4().hex[:8]}"
            for messages, reply in requests(trajectory):
                recorded.reply = reply
                body: dict[str, Any] = {"model": "m", "messages": messages}
                if offered:
                    body["tools"] = offered
                answer = http.post(f"{url}/chat/completions", json=body, headers=headers)
                answer.raise_for_status()
                usage = answer.json()["usage"]
                recorded.calls.append(
                    (
                        usage["prompt_tokens"],
                        usage["prompt_tokens_details"]["cached_tokens"],
                        usage["completion_tokens"],
                    )
                )
            print(f"\r{i + 1}/{len(sessions)} sessions", end="", flush=True)
            time.sleep(pause)
    print("\r", end="")


def _costs(calls: list[tuple[int, int, int]]) -> dict[str, float]:
    """The calls' cost under each price table."""
    return {
        name: sum(Meter(prices=table).call_cost(*c) for c in calls)
        for name, table in PRICE_TABLES.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--idle-end", type=float, default=0.5)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    sessions = [t for t in iter_trajectories([args.data]) if isinstance(t, Trajectory)]
    sessions = sessions[: args.limit]
    started = time.perf_counter()
    usage = {mode: play(sessions, mode, args.idle_end) for mode in MODES}
    print(f"{args.data.name}: {len(sessions)} sessions, {time.perf_counter() - started:.0f} s")
    head = ("path", "prompt tok", "cached", "default $", "x", "openai $", "x")
    print(
        f"{head[0]:<16}{head[1]:>12}{head[2]:>8}{head[3]:>11}{head[4]:>7}{head[5]:>10}{head[6]:>7}"
    )
    cost = {mode: _costs(calls) for mode, calls in usage.items()}
    base = cost["direct"]
    out: dict[str, Any] = {}
    for mode, calls in usage.items():
        prompt, cached, costs = sum(c[0] for c in calls), sum(c[1] for c in calls), cost[mode]
        out[mode] = {"prompt_tokens": prompt, "cached_tokens": cached, "cost_usd": costs}
        print(
            f"{mode:<16}{prompt:>12,}{cached / prompt:>8.1%}"
            f"{costs['default']:>11.4f}{costs['default'] / base['default']:>7.3f}"
            f"{costs['openai']:>10.4f}{costs['openai'] / base['openai']:>7.3f}"
        )
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
