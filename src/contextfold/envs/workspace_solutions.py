"""Deterministic scripted solutions of the workspace tasks: the replies of a scripted agent.

Each solution is what a careful agent would do: look around, read the inputs, write a script
that computes the deliverables from the inputs (nothing is typed in from the answer), run it,
read the produced files back, and answer. :func:`scripted_agent` wraps one in a
:class:`~contextfold.models.ScriptedModel`, the agent of ``contextfold run --env
workspace:TASK --model scripted``.
"""

from __future__ import annotations

from typing import Any

from contextfold.core.errors import ConfigError
from contextfold.models import Reply, ScriptedModel, tool_call

__all__ = ["SOLUTIONS", "scripted_agent"]

_SALES_SCRIPT = """import csv
import glob
from collections import defaultdict
from decimal import Decimal

from docx import Document
from openpyxl import Workbook

units, revenue = defaultdict(int), defaultdict(Decimal)
for path in sorted(glob.glob("data/sales-2025-q*.csv")):
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            units[row["region"]] += int(row["units"])
            revenue[row["region"]] += int(row["units"]) * Decimal(row["unit_price"])
ranking = sorted(revenue, key=lambda r: (-revenue[r], r))

doc = Document()
doc.add_heading("Sales report 2025", level=1)
for region in ranking:
    doc.add_paragraph(f"{region}: {revenue[region]:.2f} ({units[region]} units)")
doc.save("report.docx")

book = Workbook()
sheet = book.active
sheet.title = "Totals"
sheet.append(["region", "units", "revenue"])
for region in ranking:
    sheet.append([region, units[region], float(revenue[region])])
book.save("totals.xlsx")
for region in ranking:
    print(region, units[region], f"{revenue[region]:.2f}")
"""

_DECK_SCRIPT = """import glob
import re

from pptx import Presentation

meetings = []
for path in glob.glob("notes/*.md"):
    text = open(path).read()
    title = re.search(r"^# (.+)$", text, re.M).group(1).strip()
    date = re.search(r"^Date: (\\S+)", text, re.M).group(1)
    block = text.split("## Decisions", 1)[1].split("##", 1)[0]
    decisions = [line[2:].strip() for line in block.splitlines() if line.startswith("- ")]
    meetings.append((date, title, decisions))
meetings.sort()

deck = Presentation()
layout = deck.slide_layouts[1]
for date, title, decisions in meetings:
    slide = deck.slides.add_slide(layout)
    slide.shapes.title.text = title
    body = slide.placeholders[1].text_frame
    body.text = decisions[0]
    for decision in decisions[1:]:
        body.add_paragraph().text = decision
    print(date, title, len(decisions), "decisions")
deck.save("decisions.pptx")
"""

_REORDER_MODULE = """REVIEW_DAYS = 14


def reorder_quantity(on_hand, daily_demand, lead_time_days, safety_stock, pack_size):
    point = daily_demand * lead_time_days + safety_stock
    if on_hand > point:
        return 0
    short = point + daily_demand * REVIEW_DAYS - on_hand
    return -(-short // pack_size) * pack_size
"""

_ORDERS_SCRIPT = """import csv

from openpyxl import Workbook

from reorder import reorder_quantity

book = Workbook()
sheet = book.active
sheet.title = "Orders"
sheet.append(["sku", "quantity"])
with open("inventory.csv", newline="") as handle:
    for row in csv.DictReader(handle):
        args = [int(row[k]) for k in ("on_hand", "daily_demand", "lead_time_days",
                                       "safety_stock", "pack_size")]
        quantity = reorder_quantity(*args)
        point = args[1] * args[2] + args[3]
        print(f"{row['sku']}: on_hand={args[0]} reorder_point={point} order={quantity}")
        if quantity > 0:
            sheet.append([row["sku"], quantity])
book.save("orders.xlsx")
"""

_TESTS_SCRIPT = """from reorder import reorder_quantity

assert reorder_quantity(100, 2, 4, 0, 6) == 0
assert reorder_quantity(8, 2, 4, 0, 6) == 30
assert reorder_quantity(0, 1, 2, 0, 24) == 24
print("reorder tests passed")
"""


def _call(n: int, name: str, **arguments: Any) -> Reply:
    return tool_call(name, arguments, call_id=f"call_{n}")


def _calls(*steps: tuple[str, dict[str, Any]]) -> list[Reply]:
    return [_call(n, name, **args) for n, (name, args) in enumerate(steps)]


def _notes() -> list[tuple[str, dict[str, Any]]]:
    from contextfold.envs.workspace_data import meeting_notes

    return [("read_file", {"path": path}) for path in sorted(meeting_notes()[0])]


_SALES_FINAL = _SALES_SCRIPT.replace(
    'doc.save("report.docx")',
    'doc.add_paragraph(f"Best region: {ranking[0]}")\ndoc.save("report.docx")',
)
_QUARTERS = [("read_file", {"path": f"data/sales-2025-q{q}.csv"}) for q in range(1, 5)]

SOLUTIONS: dict[str, list[Reply]] = {
    "sales-report": [
        *_calls(
            ("list_files", {}),
            *_QUARTERS[:2],
            ("write_file", {"path": "make_report.py", "content": _SALES_SCRIPT}),
            ("run_python", {"path": "make_report.py"}),
            ("read_file", {"path": "report.docx"}),
            *_QUARTERS[2:],
            ("write_file", {"path": "make_report.py", "content": _SALES_FINAL}),
            ("run_python", {"path": "make_report.py"}),
            ("read_file", {"path": "totals.xlsx"}),
        ),
        "Wrote report.docx (revenue per region, best region) and totals.xlsx (sheet Totals).",
    ],
    "meeting-deck": [
        *_calls(
            ("list_files", {}),
            *_notes()[:3],
            ("write_file", {"path": "make_deck.py", "content": _DECK_SCRIPT}),
            ("run_python", {"path": "make_deck.py"}),
            ("read_file", {"path": "decisions.pptx"}),
            *_notes()[3:],
        ),
        "Wrote decisions.pptx: one slide per meeting in date order, checked against every note.",
    ],
    "reorder-code": [
        *_calls(
            ("list_files", {}),
            ("read_file", {"path": "SPEC.md"}),
            ("read_file", {"path": "inventory.csv"}),
            ("write_file", {"path": "reorder.py", "content": _REORDER_MODULE}),
            ("write_file", {"path": "test_reorder.py", "content": _TESTS_SCRIPT}),
            ("run_python", {"path": "test_reorder.py"}),
            ("write_file", {"path": "make_orders.py", "content": _ORDERS_SCRIPT}),
            ("run_python", {"path": "make_orders.py"}),
            ("read_file", {"path": "orders.xlsx"}),
        ),
        "Implemented reorder.py and wrote orders.xlsx (sheet Orders) from inventory.csv.",
    ],
}
"""Each task's scripted agent replies, in order; the last is the answer."""


def scripted_agent(task_id: str) -> ScriptedModel:
    """A :class:`ScriptedModel` replaying the task's solution."""
    if task_id not in SOLUTIONS:
        known = ", ".join(SOLUTIONS)
        raise ConfigError(f"no scripted solution for workspace task {task_id!r}; known: {known}")
    return ScriptedModel(SOLUTIONS[task_id], name=f"scripted:{task_id}")
