"""contextfold serve: what the proxy costs per request, and what it saves on a long session.

    .venv/bin/python benchmarks/serve_overhead.py [--requests 200] [--steps 60] [--json out.json]

1. **Overhead.** One client grows one conversation by a turn per request and sends each
   request twice, interleaved: straight to a scripted upstream and through the proxy (strategy
   ``full``, SQLite store), both on 127.0.0.1 with the same HTTP client. Wall time per request,
   median and p99, non-streamed and streamed (to the last byte), side by side.
2. **A long session.** A scripted coding agent (reads files, marks old reads ``STALE:``) runs
   ``--steps`` steps twice against fresh upstreams with a vLLM-like prefix cache
   (:class:`~contextfold.testing.upstreams.chat.ScriptedServer`): sent direct, and through ``serve``
   with the default strategy (refold). Upstream prompt tokens, cached tokens and cost under
   the default price table (cache reads 0.1x, writes 1.25x) for each.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from contextfold.core.meter import PRICE_TABLES, Meter
from contextfold.serve import ServeConfig
from contextfold.serve.runner import ProxyThread
from contextfold.testing.upstreams.chat import ScriptedServer, echo_reply

TOKEN = "bench"
HEADERS = {"Authorization": f"Bearer {TOKEN}"}


def _timed(http: httpx.Client, url: str, body: dict[str, Any]) -> float:
    start = time.perf_counter()
    if body.get("stream"):
        with http.stream("POST", f"{url}/chat/completions", json=body, headers=HEADERS) as r:
            r.raise_for_status()
            for _ in r.iter_raw():
                pass
    else:
        http.post(f"{url}/chat/completions", json=body, headers=HEADERS).raise_for_status()
    return (time.perf_counter() - start) * 1000


def _stats(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    return {
        "median_ms": statistics.median(ordered),
        "p99_ms": ordered[int(0.99 * (len(ordered) - 1))],
    }


def overhead(requests: int, store: Path) -> dict[str, dict[str, float]]:
    times: dict[str, list[float]] = {
        k: [] for k in ("direct", "proxy", "direct_stream", "proxy_stream")
    }
    with (
        ScriptedServer(echo_reply) as up,
        ProxyThread(
            ServeConfig(upstream=up.url, strategy="full", store=store, token=TOKEN)
        ) as proxy,
        httpx.Client(timeout=60) as http,
    ):
        messages: list[dict[str, Any]] = [{"role": "system", "content": "You are terse."}]
        for i in range(requests):
            messages.append({"role": "user", "content": f"question {i}: " + "context " * 40})
            for stream in (False, True):
                body = {"model": "m", "messages": messages, "stream": stream}
                suffix = "_stream" if stream else ""
                times["direct" + suffix].append(_timed(http, up.url, body))
                times["proxy" + suffix].append(_timed(http, proxy.url, body))
            messages.append({"role": "assistant", "content": f"ok: question {i}"})
    return {k: _stats(v) for k, v in times.items()}


def _agent_reply(body: dict[str, Any]) -> dict[str, Any]:
    n = sum(1 for m in body["messages"] if m["role"] == "tool")
    stale = f"{n - 3}" if n >= 3 else "none"
    call = {"id": f"call_{n}", "type": "function"}
    call["function"] = {
        "name": "bash",
        "arguments": json.dumps({"command": f"cat src/m{n % 25}.py"}),
    }
    text = f"Reading module {n % 25}.\nPROGRESS: read m{n % 25}.py\nSTALE: {stale}"
    return {"role": "assistant", "content": text, "tool_calls": [call]}


def _file(n: int) -> str:
    return "\n".join(
        f"def f{n}_{k}(x):  # helper {k} of module {n}\n    return x * {k} + {n}" for k in range(30)
    )


def long_session(steps: int, url: str) -> dict[str, Any]:
    meter, calls = Meter(prices=PRICE_TABLES["default"]), []
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent. Use bash."},
        {"role": "user", "content": "Find where the helper constants are defined."},
    ]
    tools = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]
    with httpx.Client(timeout=120) as http:
        for n in range(steps):
            body = {"model": "m", "messages": messages, "tools": tools}
            reply = http.post(f"{url}/chat/completions", json=body, headers=HEADERS)
            reply.raise_for_status()
            data = reply.json()
            message = data["choices"][0]["message"]
            usage = data["usage"]
            cached = usage["prompt_tokens_details"]["cached_tokens"]
            calls.append((usage["prompt_tokens"], cached, usage["completion_tokens"]))
            call = message["tool_calls"][0]
            messages += [
                message,
                {"role": "tool", "tool_call_id": call["id"], "content": _file(n % 25)},
            ]
    prompt = sum(c[0] for c in calls)
    cached = sum(c[1] for c in calls)
    cost = sum(meter.call_cost(p, c, o) for p, c, o in calls)
    return {
        "prompt_tokens": prompt,
        "cached_tokens": cached,
        "cached_share": cached / prompt if prompt else 0.0,
        "peak_prompt_tokens": max(c[0] for c in calls),
        "cost_usd": cost,
    }


def compare_session(steps: int, store: Path) -> dict[str, dict[str, Any]]:
    with ScriptedServer(_agent_reply) as up:
        direct = long_session(steps, up.url)
    with (
        ScriptedServer(_agent_reply) as up,
        ProxyThread(
            ServeConfig(upstream=up.url, store=store, token=TOKEN)  # default strategy: refold
        ) as proxy,
    ):
        through = long_session(steps, proxy.url)
    return {"direct": direct, "serve (refold)": through}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        lat = overhead(args.requests, Path(tmp) / "overhead.db")
        session = compare_session(args.steps, Path(tmp) / "session.db")
    print(f"per-request wall time over {args.requests} requests (conversation grows a turn each)")
    print(f"{'path':<16}{'median ms':>12}{'p99 ms':>12}")
    for name, s in lat.items():
        print(f"{name:<16}{s['median_ms']:>12.2f}{s['p99_ms']:>12.2f}")
    for mode in ("", "_stream"):
        d, p = lat["direct" + mode], lat["proxy" + mode]
        label = "streamed" if mode else "non-streamed"
        print(
            f"overhead {label}: median +{p['median_ms'] - d['median_ms']:.2f} ms, "
            f"p99 +{p['p99_ms'] - d['p99_ms']:.2f} ms"
        )
    print(f"\nscripted coding session, {args.steps} steps, default price table")
    print(f"{'path':<16}{'prompt tok':>12}{'cached tok':>12}{'cached':>8}{'peak':>8}{'cost $':>10}")
    for name, r in session.items():
        print(
            f"{name:<16}{r['prompt_tokens']:>12,}{r['cached_tokens']:>12,}"
            f"{r['cached_share']:>8.1%}{r['peak_prompt_tokens']:>8,}{r['cost_usd']:>10.4f}"
        )
    if args.json is not None:
        args.json.write_text(json.dumps({"overhead": lat, "session": session}, indent=2))


if __name__ == "__main__":
    main()
