"""Print carryon's view at the end of a workspace run (the README's rendered view).

    PYTHONPATH=src .venv/bin/python benchmarks/carryon_workspace_view.py

The agent is the scripted solution of ``workspace:sales-report`` and the folder is a
ScriptedModel (no LLM): its tracker proposes the report the agent wrote and the revenue
figures the agent's script printed; its compiler adds both as carriers, with the figures
read from the evidence steps it is shown, and writes an execution context. The grounder
checks report.docx in the real workspace. Prints the fold's grounding checks, then the view.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from contextfold.bench.live import run_live
from contextfold.core.messages import Message, message_text
from contextfold.core.tokens import ApproxCounter
from contextfold.envs.workspace_solutions import scripted_agent
from contextfold.models import ScriptedModel
from contextfold.strategies.folding import FolderSource
from contextfold.strategies.registry import build_strategy

_FIGURES = re.compile(r"^(North|South|East|West) (\d+) ([\d.]+)$", re.M)


class Folder:
    def __init__(self) -> None:
        self.model = ScriptedModel(self.reply)

    def reply(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]]) -> str:
        schema = self.model.response_schema or {}
        if "candidates" in schema.get("properties", {}):
            return json.dumps({"candidates": _CANDIDATES})
        shown = message_text(messages[-1])
        claims = [
            {"id": region.lower(), "proposition": f"{region} 2025 revenue", "value": revenue}
            | {"source_steps": [5]}
            for region, _, revenue in _FIGURES.findall(shown)
        ]
        updates = [{**_ADD_REPORT}, {**_ADD_FIGURES, "claims": claims}]
        return json.dumps({"updates": updates, "ec": _EC})


_CANDIDATES = [
    {
        "type": "external_object",
        "description": "report.docx, the Word report the task asks for",
        "location": "report.docx",
        "expected_text": "Sales report 2025",
        "evidence_steps": [4, 5, 6],
    },
    {
        "type": "information_product",
        "description": "revenue per region printed by make_report.py",
        "evidence_steps": [5],
    },
]
_ADD_REPORT = {
    "op": "add",
    "kind": "external_object",
    "name": "sales report",
    "location": "report.docx",
    "candidate_id": "c1",
    "candidate_version": 1,
    "progress": "heading and one revenue line per region; made by make_report.py",
    "conditions": "regenerate with run_python make_report.py after changing the script",
    "source_steps": [4, 5, 6],
}
_ADD_FIGURES = {
    "op": "add",
    "kind": "information_product",
    "name": "revenue per region",
    "candidate_id": "c2",
    "candidate_version": 1,
    "source_steps": [5],
}
_EC = {
    "focus": "finish and check report.docx and totals.xlsx",
    "continuity": "all four quarters read; report and totals written once",
    "constraints": ["revenue to the cent", "Totals sheet sorted by revenue, highest first"],
    "continuation": "add the best region to the report, rerun, then read totals.xlsx",
    "obligations": [
        {"text": "Add a 'Best region' line to report.docx and rerun", "source_steps": [6]},
        {"text": "Check totals.xlsx: header row, 4 regions, sorted", "source_steps": [5]},
    ],
}


def main() -> None:
    folder = Folder()
    folders = FolderSource(default="agent", agent=lambda: folder.model)
    result = run_live(
        "workspace:sales-report",
        None,
        "carryon gate=none",  # the method itself: the cost gate would not ask here
        lambda: scripted_agent("sales-report"),
        counter=ApproxCounter(),
        folders=folders,
    )
    (record,) = result.history.folds
    print(f"reward {result.reward}; fold accepted: {record.accepted} {record.reason or ''}")
    for c in record.output.get("grounding", []):
        print(f"  {c['candidate']} v{c['version']} {c['predicate']}: {c['verdict']}")
    view = build_strategy("carryon", folders=folders).render(result.history, None)
    for message in view.messages:
        text = message_text(message)
        lines = text.splitlines() or [""]
        if message.role in ("assistant", "tool"):
            lines = [lines[0][:90] + (" ..." if len(text) > 90 else "")]
        print(f"{message.role:9} | " + "\n            ".join(lines))


if __name__ == "__main__":
    main()
