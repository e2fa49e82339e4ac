"""Appends per second: the SQLite store (synchronous FULL and NORMAL) and the PostgreSQL store.

    .venv/bin/python benchmarks/store_appends.py [--steps 300] [--runs 5] [--writers 4]

Each run appends ``--steps`` steps (a user message, then an assistant message with a tool call
and its ~2 KB result, as a coding agent's) to a new session, one ``append_step`` (one
committed transaction) at a time, and reports appends per second; the median of ``--runs``
runs is printed. Then ``--writers`` threads, each with its own connection and session, append
at once (what replicas of ``serve`` do): total appends per second. PostgreSQL is a throwaway
server on 127.0.0.1 (``tests/_postgres.py``: Debian's binaries, fsync on, default
``synchronous_commit``), so its numbers include a loopback round trip per statement.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests._postgres

from tests._postgres import TempPostgres

from contextfold.core.history import Step, make_step
from contextfold.core.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage
from contextfold.core.protocols import Store
from contextfold.core.store import PostgresStore, SQLiteStore
from contextfold.core.tokens import ApproxCounter

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
        store.close()  # type: ignore[attr-defined]


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
        store.close()  # type: ignore[attr-defined]

    threads = [threading.Thread(target=run, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    return n * len(batch) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--writers", type=int, default=4)
    args = parser.parse_args()
    batch = steps(args.steps)
    folder = Path(tempfile.mkdtemp(prefix="store-appends-"))
    server = TempPostgres().start()
    try:
        url = server.new_database()
        backends: dict[str, Callable[[], Store]] = {
            "sqlite FULL": lambda: SQLiteStore(folder / "full.db", synchronous="FULL"),
            "sqlite NORMAL": lambda: SQLiteStore(folder / "normal.db", synchronous="NORMAL"),
            "postgresql": lambda: PostgresStore(url),
        }
        print(f"{args.steps} appends a run, median of {args.runs} runs; {args.writers} writers")
        print(f"{'store':<15}{'appends/s, 1 writer':>22}{f'total, {args.writers} writers':>22}")
        for name, opener in backends.items():
            rates = [one_writer(opener, batch, f"s{r}") for r in range(args.runs)]
            many = many_writers(opener, batch, "w", args.writers) if args.writers else 0.0
            print(f"{name:<15}{statistics.median(rates):>22,.0f}{many:>22,.0f}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
