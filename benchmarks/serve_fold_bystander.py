"""contextfold serve: a bystander session's latency while another session folds.

    .venv/bin/python benchmarks/serve_fold_bystander.py [--folds 3] [--threshold 600] \
        [--threads 1] [--interval 0.05] [--json out.json]

A real proxy (uvicorn on 127.0.0.1, SQLite store) with ``summary threshold=T`` and the
embedded folder (``--folder local``: SmolLM2-135M through llama.cpp) in front of a scripted
upstream. The bystander, one client, grows a conversation a turn per request (a new one every
10 turns, so it never reaches the threshold itself), pausing ``--interval`` seconds between
requests, and times each request to the last byte.

Each round: a folding session sends a conversation of twice the threshold, whose request
folds with the embedded model; the bystander's requests sent while that request is in flight
count as "a fold running"; then as many requests with nothing else
running count as "no fold". Rounds alternate the two so both see the same load on the
machine; one warm-up round (the folder's first load) is not counted. The table shows the
bystander's median and p99 side by side, and their ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from contextfold.serve import ServeConfig
from contextfold.serve.runner import ProxyThread
from contextfold.testing.upstreams.chat import ScriptedServer, echo_reply

TOKEN = "bench"
HEADERS = {"Authorization": f"Bearer {TOKEN}"}


class Bystander:
    """One client's conversation, a turn per request, restarted every ``turns`` turns."""

    def __init__(self, url: str, turns: int = 10) -> None:
        self.url, self.turns, self.round, self.messages = url, turns, 0, []
        self._restart()

    def _restart(self) -> None:
        self.round += 1
        self.messages = [{"role": "system", "content": "You answer briefly."}]
        self.messages.append({"role": "user", "content": f"conversation {self.round}: hello"})

    def ask(self, http: httpx.Client) -> tuple[float, float]:
        """(start, end) of one request, perf_counter seconds."""
        body = {"model": "m", "messages": self.messages}
        headers = {**HEADERS, "X-Contextfold-Session": f"bystander-{self.round}"}
        start = time.perf_counter()
        reply = http.post(f"{self.url}/chat/completions", json=body, headers=headers)
        reply.raise_for_status()
        end = time.perf_counter()
        text = reply.json()["choices"][0]["message"]["content"]
        self.messages += [{"role": "assistant", "content": text}]
        if len(self.messages) > 2 * self.turns:
            self._restart()
        else:
            self.messages.append({"role": "user", "content": f"and then {len(self.messages)}?"})
        return start, end


def folding_conversation(n: int, tokens: int) -> list[dict[str, Any]]:
    """A conversation of about ``tokens`` tokens (characters / 4) of distinct facts."""
    out: list[dict[str, Any]] = [{"role": "system", "content": "You are a research agent."}]
    k = 0
    while sum(len(m["content"]) for m in out) < tokens * 4:
        fact = f"Fact {k} of task {n}: sample {k} weighs {17 * k % 97} g, in bin {k % 13}."
        out.append({"role": "user", "content": fact})
        out.append({"role": "assistant", "content": f"Noted fact {k}."})
        k += 1
    return [*out, {"role": "user", "content": f"Task {n}: which bin holds sample 3?"}]


class Bench:
    """The two phases, alternated: the bystander's requests while one session's request
    folds, then as many with nothing else running, fold after fold."""

    def __init__(self, url: str, tokens: int, interval: float) -> None:
        self.url, self.tokens, self.interval = url, tokens, interval
        self.bystander = Bystander(url)
        self.folding = 0
        self.quiet: list[float] = []
        self.busy: list[float] = []
        self.fold_seconds: list[float] = []

    def round(self, http: httpx.Client) -> None:
        """One fold with the bystander's requests beside it, then a quiet window."""
        self.folding += 1
        body = {"model": "m", "messages": folding_conversation(self.folding, self.tokens)}
        took: list[float] = []

        def fold() -> None:
            start = time.perf_counter()
            with httpx.Client(timeout=900) as own:
                own.post(f"{self.url}/chat/completions", json=body, headers=HEADERS)
            took.append(time.perf_counter() - start)

        thread = threading.Thread(target=fold)
        thread.start()
        time.sleep(0.5)  # the folding request is claimed and its fold has begun
        counted = 0
        while thread.is_alive():  # each request sent while the fold runs counts
            start, end = self.bystander.ask(http)
            self.busy.append((end - start) * 1000)
            counted += 1
            time.sleep(self.interval)
        thread.join()
        self.fold_seconds += took
        for _ in range(counted):
            start, end = self.bystander.ask(http)
            self.quiet.append((end - start) * 1000)
            time.sleep(self.interval)


def _stats(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    return {
        "n": len(ordered),
        "median_ms": statistics.median(ordered),
        "p99_ms": ordered[int(0.99 * (len(ordered) - 1))],
    }


def _metric(url: str, name: str) -> int:
    text = httpx.get(f"{url.removesuffix('/v1')}/metrics", headers=HEADERS).text
    line = next(x for x in text.splitlines() if x.startswith(f"contextfold_{name} "))
    return int(line.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--threshold", type=int, default=600, help="summary's threshold")
    parser.add_argument("--threads", type=int, default=1, help="the embedded folder's threads")
    parser.add_argument("--interval", type=float, default=0.05, help="bystander's pause, s")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer(echo_reply) as up:
        config = ServeConfig(
            upstream=up.url,
            strategy=f"summary threshold={args.threshold}",
            folder="local",
            threads=args.threads,
            store=Path(tmp) / "sessions.db",
            token=TOKEN,
        )
        with ProxyThread(config) as proxy, httpx.Client(timeout=900) as http:
            bench = Bench(proxy.url, 2 * args.threshold, args.interval)
            print("warming the embedded folder (one fold, not counted)...", flush=True)
            bench.round(http)
            bench.quiet, bench.busy, bench.fold_seconds = [], [], []
            for n in range(args.folds):
                print(f"fold {n + 1} of {args.folds}...", flush=True)
                bench.round(http)
            folds = _metric(proxy.url, "folds_total")
    result = {"no_fold": _stats(bench.quiet), "fold_running": _stats(bench.busy)}
    result |= {"folds_total": folds, "fold_seconds": bench.fold_seconds}
    _print(result)
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2))


def _print(result: dict[str, Any]) -> None:
    quiet, busy = result["no_fold"], result["fold_running"]
    print(f"{'bystander request':<26}{'n':>6}{'median ms':>12}{'p99 ms':>12}")
    for label, row in (("no fold", quiet), ("a fold running", busy)):
        print(f"{label:<26}{row['n']:>6}{row['median_ms']:>12.1f}{row['p99_ms']:>12.1f}")
    ratio_median = busy["median_ms"] / quiet["median_ms"]
    ratio_p99 = busy["p99_ms"] / quiet["p99_ms"]
    print(f"{'fold running / no fold':<26}{'':>6}{ratio_median:>11.2f}x{ratio_p99:>11.2f}x")
    seconds = ", ".join(f"{s:.1f}" for s in result["fold_seconds"])
    print(f"folds made: {result['folds_total']}; folding requests took {seconds} s")


if __name__ == "__main__":
    main()
