"""Child process of the store crash test: appends deterministic steps until it is killed.

Usage: ``python _store_writer.py DB_PATH|postgresql://URL [FULL|NORMAL]``. Creates session
``crash`` and appends ``crash_step(0)``, ``crash_step(1)``, ... printing each index (flushed)
once ``append_step`` has returned, i.e. once the step is acknowledged as durable. Exits by
itself after :data:`TIME_LIMIT_S` so an orphan never runs forever.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Literal

from contextfold.core.history import Step, make_step
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.core.store import open_store
from contextfold.core.tokens import ApproxCounter

SESSION = "crash"
SYSTEM = SystemMessage("You are the crash-test writer.")
TIME_LIMIT_S = 60.0


def crash_messages(i: int) -> list[Message]:
    """The messages of step ``i``: a function of ``i`` only."""
    if i % 3 == 0:
        return [UserMessage(f"user turn {i}: ünïcödé 漢字 🚀 " * (i % 5 + 1))]
    if i % 3 == 1:
        args = json.dumps({"path": f"/tmp/f{i}.txt", "n": i})
        calls = (ToolCall(f"call-{i}-a", "read", args), ToolCall(f"call-{i}-b", "grep", "{}"))
        return [
            AssistantMessage(None, tool_calls=calls, reasoning=f"thinking about {i}"),
            ToolMessage(f"output {i}\n" * (i % 7 + 1), f"call-{i}-a", name="read"),
            ToolMessage("", f"call-{i}-b"),
        ]
    return [AssistantMessage(f"answer {i}")]


def crash_step(i: int) -> Step:
    return make_step(i, crash_messages(i), ApproxCounter())


def main(argv: list[str]) -> int:
    path = argv[1]
    synchronous: Literal["NORMAL", "FULL"] = "NORMAL" if argv[2:] == ["NORMAL"] else "FULL"
    deadline = time.monotonic() + TIME_LIMIT_S
    with open_store(path, synchronous=synchronous) as store:
        store.create_session(SESSION, system=SYSTEM, counter=ApproxCounter.name, meta={"i": 0})
        i = 0
        while time.monotonic() < deadline:
            store.append_step(SESSION, crash_step(i))
            print(i, flush=True)
            i += 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
