"""Child process of the CarryOn commit crash test: folds and commits until it is killed.

Usage: ``python _carryon_writer.py DB_PATH``. Session ``carry``: each round appends a step and
runs one carryon fold (threshold 1) whose scripted tracker and compiler revise both carriers,
so after ``k`` commits every carrier is at version ``k``; prints ``k`` (flushed) once the fold
record is appended, i.e. committed. Exits by itself after 60 s so an orphan never runs forever.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage, Message, SystemMessage, UserMessage
from contextfold.core.store import SQLiteStore
from contextfold.models import ScriptedModel
from contextfold.strategies.carryon import CarryOnConfig, CarryOnStrategy
from contextfold.strategies.folding import Folder

SESSION = "carry"
KINDS = (("information_product", "findings"), ("situated_state", "server"))


class Writer:
    """Scripted tracker and compiler replies that revise every carrier at every fold."""

    def __init__(self) -> None:
        self.commits = 0

    def __call__(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]]) -> str:
        last = max(int(n) for n in re.findall(r"\[step (\d+)\]", messages[-1].content or ""))
        if "registry of candidate" in (messages[0].content or ""):
            cands = [
                {
                    "id": f"c{k + 1}" if self.commits else "",
                    "type": kind,
                    "description": name,
                    "evidence_steps": [last],
                }
                for k, (kind, name) in enumerate(KINDS)
            ]
            return json.dumps({"candidates": cands})
        self.commits += 1
        return json.dumps(
            {
                "updates": [
                    self.update(k, kind, name, last) for k, (kind, name) in enumerate(KINDS)
                ],
                "ec": {"focus": f"round {self.commits}"},
            }
        )

    def update(self, k: int, kind: str, name: str, last: int) -> dict[str, Any]:
        first = self.commits == 1
        return {
            "op": "add" if first else "revise",
            "kind": kind,
            "name": name,
            "anchor": name,
            "carrier_id": "" if first else f"{'info' if k == 0 else 'state'}:{name}",
            "base_version": self.commits - 1,
            "candidate_id": f"c{k + 1}",
            "candidate_version": self.commits,
            "state": f"round {self.commits}",
            "claims": [{"id": "r", "proposition": "first round", "source_steps": [last]}]
            if first and k == 0
            else [],
            "source_steps": [last],
        }


def main(argv: list[str]) -> int:
    deadline = time.monotonic() + 60.0
    store = SQLiteStore(argv[1])
    history = History(SystemMessage("sys"), store=store, session_id=SESSION)
    history.append(UserMessage("Keep working."))
    strategy = CarryOnStrategy(
        CarryOnConfig(threshold=1, gate="none"), folder=Folder(ScriptedModel(Writer()))
    )
    while time.monotonic() < deadline:
        history.append(AssistantMessage(f"working on round {len(history)} " + "x" * 40))
        (record,) = strategy.fold(history, None)
        assert record.accepted, record.reason
        print(record.output["state"]["commits"], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
