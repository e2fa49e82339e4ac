"""Appends per second: the SQLite store (synchronous FULL and NORMAL) and the PostgreSQL store.

    .venv/bin/python benchmarks/store_appends.py [--steps 300] [--runs 5] [--writers 4]
        [--url postgresql://USER@HOST:PORT/DATABASE]

Each run appends ``--steps`` steps (a user message, then an assistant message with a tool call
and its ~2 KB result, as a coding agent's) to a new session, one ``append_step`` (one
committed transaction) at a time, and reports appends per second; the median of ``--runs``
runs is printed. Then ``--writers`` threads, each with its own connection and session, append
at once (what replicas of ``serve`` do): total appends per second. PostgreSQL is the server
at ``--url`` (a database the benchmark may write to: each run adds its own sessions) or, without
it, a throwaway server on 127.0.0.1 (:mod:`contextfold.testing.postgres`: Debian's
binaries, fsync on, default ``synchronous_commit``), so its numbers include a loopback round trip
per statement.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from contextfold.core.errors import ContextFoldError
from contextfold.core.history import Step, make_step
from contextfold.core.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from contextfold.core.protocols import Store
from contextfold.core.store import PostgresStore, SQLiteStore, is_postgres_url
from contextfold.core.tokens import ApproxCounter
from contextfold.testing.postgres import TempPostgres

COUNTER = ApproxCounter()
OUTPUT = "def handler(request):\n    return respond(request, status=200)\n" * 32


def steps(n: int) -> list[Step]:
    out = []
    for i in range(n):
        if i % 2 == 0:
            out.append(make_step(i, [UserMessage(f"next step {i}: run the tests")], COUNTER))
        else:
            call = ToolCall(f"c{i}", "read_file", f'{{"path": "src/m{i}.py"}}')
            messages = [
                AssistantMessage(f"reading m{i}", tool_calls=(call,)),
                ToolMessage(OUTPUT, f"c{i}"),
            ]
            out.append(make_step(i, messages, COUNTER))
    return out


def one_writer(open_store: Callable[[], Store], batch: list[Step], session: str) -> float:
    store = open_store()
    try:
        store.create_session(session, system=None, counter=COUNTER.name, meta={})
        start = time.perf_counter()
        for step in batch:
            store.append_step(session, step)
        return len(batch) / (time.perf_counter() - start)
    finally:
        store.close()


def many_writers(open_store: Callable[[], Store], batch: list[Step], tag: str, n: int) -> float:
    """Total appends per second of ``n`` threads, each with its own connection and session
    (opened in its thread: an SQLite connection belongs to the thread that opened it)."""
    barrier = threading.Barrier(n + 1)

    def run(k: int) -> None:
        store = open_store()
        store.create_session(f"{tag}-{k}", system=None, counter=COUNTER.name, meta={})
        barrier.wait()
        for step in batch:
            store.append_step(f"{tag}-{k}", step)
        store.close()

    threads = [threading.Thread(target=run, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    return n * len(batch) / (time.perf_counter() - start)


@contextmanager
def postgres_url(given: str | None) -> Iterator[str]:
    """``given``, or the URL of a fresh database on a throwaway server stopped at the end."""
    if given:
        if not is_postgres_url(given):
            raise ContextFoldError(f"--url takes a postgresql:// URL, not {given!r}")
        PostgresStore(given).close()  # unreachable or refused: fail before any work
        yield given
        return
    server = TempPostgres().start()
    try:
        yield server.new_database()
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--url", help="an existing PostgreSQL database (default: a throwaway one)")
    args = parser.parse_args()
    batch = steps(args.steps)
    folder = Path(tempfile.mkdtemp(prefix="store-appends-"))
    tag = f"r{os.getpid()}-{time.time_ns()}"  # this run's sessions (a --url may hold others)
    with postgres_url(args.url) as url:
        backends: dict[str, Callable[[], Store]] = {
            "sqlite FULL": lambda: SQLiteStore(folder / "full.db", synchronous="FULL"),
            "sqlite NORMAL": lambda: SQLiteStore(folder / "normal.db", synchronous="NORMAL"),
            "postgresql": lambda: PostgresStore(url),
        }
        print(f"{args.steps} appends a run, median of {args.runs} runs; {args.writers} writers")
        print(f"{'store':<15}{'appends/s, 1 writer':>22}{f'total, {args.writers} writers':>22}")
        for name, opener in backends.items():
            rates = [one_writer(opener, batch, f"{tag}-s{r}") for r in range(args.runs)]
            many = many_writers(opener, batch, f"{tag}-w", args.writers) if args.writers else 0.0
            print(f"{name:<15}{statistics.median(rates):>22,.0f}{many:>22,.0f}")


if __name__ == "__main__":
    try:
        main()
    except (ContextFoldError, RuntimeError) as exc:  # a bad --url, no PostgreSQL installed
        sys.exit(f"error: {exc}")
