"""Workspace tasks that produce documents, spreadsheets and code, scored by opening them.

Each deliverable is all or nothing, so an absent or wrong file scores 0; each task has a
deterministic scripted solution (:mod:`contextfold.envs.workspace_solutions`) that scores 1.0
and runs past CarryOn's 6,000-token trigger.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from contextfold.core.documents import DocumentError, document_text
from contextfold.core.errors import ConfigError
from contextfold.envs import workspace_data as data

__all__ = ["WORKSPACE_SYSTEM", "WORKSPACE_TASKS", "WorkspaceTask", "get_workspace_task"]

WORKSPACE_SYSTEM = (
    "You work in a workspace directory with the tools list_files, read_file, write_file and "
    "run_python. Produce the files the task asks for (write a Python script that makes a "
    "docx, xlsx or pptx with python-docx, openpyxl or python-pptx, then run it), check them, "
    "and end with a short answer naming what you produced."
)


@dataclass(frozen=True, slots=True)
class WorkspaceTask:
    """One task: its prompt, the inputs it seeds the workspace with, and its scorer.

    The tasks (:data:`WORKSPACE_TASKS`):

    - ``sales-report``: from ``data/sales-2025-q1.csv`` to ``q4``, a Word report (``report.docx``)
      stating each region's 2025 revenue and an Excel sheet (``totals.xlsx``, sheet Totals) of
      units and revenue per region, highest revenue first.
    - ``meeting-deck``: from six meeting notes, a PowerPoint deck (``decisions.pptx``): one slide
      per meeting in date order, its title the meeting's, its body every decision taken.
    - ``reorder-code``: from ``SPEC.md`` and ``inventory.csv``, a Python module (``reorder.py``)
      implementing the reorder rule (run on unseen cases) and ``orders.xlsx`` (sheet Orders).
    """

    id: str
    prompt: str
    seed: dict[str, str]
    check: Callable[[Path], float]
    """Scores the workspace after the run, in [0, 1]."""


def _rows(path: Path, sheet: str) -> list[list[str]] | None:
    """A sheet's rows as text cells, or None when the file or the sheet is missing."""
    try:
        text = document_text(path)
    except DocumentError:
        return None
    lines = text.split("\n")
    marker = f"[sheet {sheet}]"
    if marker not in lines:
        return None
    body = []
    for line in lines[lines.index(marker) + 1 :]:
        if line.startswith("[sheet "):
            break
        body.append(line.split("\t"))
    return body


def _number(cell: str) -> Decimal | None:
    try:
        return Decimal(cell.replace(",", "").strip())
    except ArithmeticError:
        return None


# --------------------------------------------------------------------------- sales-report

_SALES_SEED, _SALES = data.sales_data()


def _sales_check(root: Path) -> float:
    return (_sales_report_ok(root / "report.docx") + _sales_sheet_ok(root / "totals.xlsx")) / 2


def _sales_report_ok(path: Path) -> float:
    try:
        lines = document_text(path).split("\n")
    except DocumentError:
        return 0.0
    for region, revenue in _SALES.revenue.items():
        if not any(region in line and f"{revenue:.2f}" in line for line in lines):
            return 0.0
    return 1.0


def _sales_sheet_ok(path: Path) -> float:
    rows = _rows(path, "Totals")
    if not rows or len(rows) != len(_SALES.revenue) + 1:
        return 0.0
    for region, row in zip(_SALES.ranking(), rows[1:], strict=True):
        if len(row) < 3 or row[0].strip() != region:
            return 0.0
        units, revenue = _number(row[1]), _number(row[2])
        if units != _SALES.units[region] or revenue is None:
            return 0.0
        if abs(revenue - _SALES.revenue[region]) > Decimal("0.005"):
            return 0.0
    return 1.0


SALES_REPORT = WorkspaceTask(
    "sales-report",
    "data/sales-2025-q1.csv to q4.csv hold 2025's monthly sales (units and unit price per "
    "region, channel and product). "
    "Write report.docx: a heading 'Sales report 2025', then one line per region giving its "
    "total revenue to the cent (e.g. 'North: 12345.67'). Write totals.xlsx with a sheet named "
    "Totals: header row (region, units, revenue), then one row per region with its total units "
    "and revenue, highest revenue first.",
    _SALES_SEED,
    _sales_check,
)

# --------------------------------------------------------------------------- meeting-deck

_NOTES_SEED, _MEETINGS = data.meeting_notes()


def _deck_check(root: Path) -> float:
    try:
        text = document_text(root / "decisions.pptx")
    except DocumentError:
        return 0.0
    slides = text.split("[slide ")[1:]
    if len(slides) != len(_MEETINGS):
        return 0.0
    for slide, meeting in zip(slides, _MEETINGS, strict=True):
        lines = slide.split("\n")[1:]
        if not lines or lines[0].strip() != meeting.title:
            return 0.0
        if not all(d in slide for d in meeting.decisions):
            return 0.0
    return 1.0


MEETING_DECK = WorkspaceTask(
    "meeting-deck",
    "The folder notes/ holds the notes of six meetings. Make decisions.pptx: one slide per "
    "meeting, in date order (oldest first); each slide's title is the meeting's title (the "
    "note's first heading) and its body lists every decision of that meeting, worded as in "
    "the notes.",
    _NOTES_SEED,
    _deck_check,
)

# --------------------------------------------------------------------------- reorder-code

_STOCK_SEED, _STOCK = data.stock_data()
_HIDDEN = [(0, 5, 3, 10, 12), (100, 2, 4, 0, 6), (26, 4, 4, 10, 10), (27, 4, 4, 10, 10)]
_HIDDEN += [(3, 9, 11, 29, 24), (500, 1, 2, 3, 6), (0, 1, 2, 0, 24)]
_PROBE = """import json, sys
sys.path.insert(0, ".")
from reorder import reorder_quantity
print(json.dumps([reorder_quantity(*case) for case in json.loads(sys.argv[1])]))
"""


def _reorder_check(root: Path) -> float:
    return (_reorder_code_ok(root) + _orders_ok(root / "orders.xlsx")) / 2


def _reorder_code_ok(root: Path) -> float:
    if not (root / "reorder.py").is_file():
        return 0.0
    cases = json.dumps(_HIDDEN)
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE, cases],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        got = json.loads(done.stdout)
    except (subprocess.TimeoutExpired, json.JSONDecodeError):
        return 0.0
    return 1.0 if got == [data.reorder_quantity(*case) for case in _HIDDEN] else 0.0


def _orders_ok(path: Path) -> float:
    rows = _rows(path, "Orders")
    want = [(r.sku, data.reorder_quantity(*_stock_args(r))) for r in _STOCK]
    want = [(sku, qty) for sku, qty in want if qty > 0]
    if not rows or len(rows) != len(want) + 1:
        return 0.0
    got = [(row[0].strip(), _number(row[1]) if len(row) > 1 else None) for row in rows[1:]]
    return 1.0 if got == [(sku, Decimal(qty)) for sku, qty in want] else 0.0


def _stock_args(r: data.StockRow) -> tuple[int, int, int, int, int]:
    return (r.on_hand, r.daily_demand, r.lead_time_days, r.safety_stock, r.pack_size)


REORDER_CODE = WorkspaceTask(
    "reorder-code",
    "SPEC.md states a reorder rule and two deliverables; inventory.csv holds the stock. "
    "Implement the rule in reorder.py and produce orders.xlsx exactly as SPEC.md says.",
    _STOCK_SEED,
    _reorder_check,
)

WORKSPACE_TASKS: dict[str, WorkspaceTask] = {
    t.id: t for t in (SALES_REPORT, MEETING_DECK, REORDER_CODE)
}
"""The workspace tasks by id."""


def get_workspace_task(task_id: str) -> WorkspaceTask:
    try:
        return WORKSPACE_TASKS[task_id]
    except KeyError:
        known = ", ".join(WORKSPACE_TASKS)
        raise ConfigError(f"unknown workspace task {task_id!r}; known: {known}") from None
