"""contextfold serve: what a failed request costs on a long session, beside a good one.

    .venv/bin/python benchmarks/serve_failed_turn.py [--messages 2000] [--rounds 20] \
        [--json out.json]

A real proxy (uvicorn on 127.0.0.1, SQLite store, strategy ``refold``) in front of a scripted
upstream. One conversation is grown to ``--messages`` messages (a coding agent's: a read per
step, its output, ``PROGRESS`` / ``STALE`` lines), then each round sends, one after another:
a good request (a new turn), a request the upstream fails (500, so the proxy answers 502 and
puts the session back), and the same request again, now answered. Times are to the last byte,
per request; the good request right after a failure also waits for whatever the failure left
to do. Medians and p99 side by side.
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

from contextfold.serve import ServeConfig
from contextfold.serve.runner import ProxyThread
from contextfold.testing.upstreams.chat import ScriptedServer, echo_reply

TOKEN = "bench"
HEADERS = {"Authorization": f"Bearer {TOKEN}"}


def conversation(messages: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": "You fix bugs."}]
    out.append({"role": "user", "content": "Fix the failing test."})
    k = 0
    while len(out) < messages:
        k += 1
        call = {"id": f"c{k}", "type": "function"}
        call["function"] = {"name": "read_file", "arguments": json.dumps({"path": f"m{k}.py"})}
        text = f"Reading m{k}.py.\nPROGRESS: read m{k - 1}.py\nSTALE: {max(1, k - 8)}"
        out.append({"role": "assistant", "content": text, "tool_calls": [call]})
        out.append({"role": "tool", "tool_call_id": f"c{k}", "content": f"line of m{k}\n" * 25})
    return out


def _timed(http: httpx.Client, url: str, messages: list[dict[str, Any]]) -> tuple[float, int]:
    start = time.perf_counter()
    reply = http.post(f"{url}/chat/completions", json={"model": "m", "messages": messages})
    return (time.perf_counter() - start) * 1000, reply.status_code


def run(messages: int, rounds: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"good": [], "failed": [], "good_after_failed": []}
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer(echo_reply) as up:
        config = ServeConfig(
            upstream=up.url, strategy="refold", store=Path(tmp) / "s.db", token=TOKEN
        )
        with ProxyThread(config) as proxy, httpx.Client(timeout=600, headers=HEADERS) as http:
            talk = conversation(messages)
            _timed(http, proxy.url, talk)
            for n in range(rounds):
                talk += [{"role": "assistant", "content": "ok"}]
                talk += [{"role": "user", "content": f"good {n}"}]
                ms, status = _timed(http, proxy.url, talk)
                assert status == 200, status
                times["good"].append(ms)
                talk += [{"role": "assistant", "content": "ok"}]
                talk += [{"role": "user", "content": f"retried {n}"}]
                up.fail = (500, "overloaded")
                ms, status = _timed(http, proxy.url, talk)
                assert status == 502, status
                times["failed"].append(ms)
                up.fail = None
                ms, status = _timed(http, proxy.url, talk)
                assert status == 200, status
                times["good_after_failed"].append(ms)
    return times


def _stats(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    return {
        "median_ms": statistics.median(ordered),
        "p99_ms": ordered[int(0.99 * (len(ordered) - 1))],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    result = {k: _stats(v) for k, v in run(args.messages, args.rounds).items()}
    print(f"{'request (' + str(args.messages) + ' messages)':<34}{'median ms':>12}{'p99 ms':>12}")
    for label, key in (
        ("good", "good"),
        ("failed (upstream 500)", "failed"),
        ("good, right after a failed one", "good_after_failed"),
    ):
        row = result[key]
        print(f"{label:<34}{row['median_ms']:>12.1f}{row['p99_ms']:>12.1f}")
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
