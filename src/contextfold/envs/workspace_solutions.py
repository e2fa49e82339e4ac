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


_Call = tuple[str, dict[str, Any]]
"""One tool call of a solution: the tool's name and its arguments."""


def _solution(*steps: _Call, answer: str) -> list[Reply]:
    """The agent's replies: one tool call per step (ids numbered in order), then the answer."""
    calls = [tool_call(name, args, call_id=f"call_{n}") for n, (name, args) in enumerate(steps)]
    return [*calls, answer]


def _read(*paths: str) -> list[_Call]:
    return [("read_file", {"path": path}) for path in paths]


def _script(path: str, content: str, *, then_read: str | None = None) -> list[_Call]:
    """Write the script, run it, and read back ``then_read`` (a file it wrote) when given."""
    steps: list[_Call] = [("write_file", {"path": path, "content": content})]
    steps.append(("run_python", {"path": path}))
    return steps + (_read(then_read) if then_read else [])


def _notes() -> list[_Call]:
    from contextfold.envs.workspace_data import meeting_notes

    return _read(*sorted(meeting_notes()[0]))


_SALES_FINAL = _SALES_SCRIPT.replace(
    'doc.save("report.docx")',
    'doc.add_paragraph(f"Best region: {ranking[0]}")\ndoc.save("report.docx")',
)
_QUARTERS = _read(*(f"data/sales-2025-q{q}.csv" for q in range(1, 5)))
_NOTES = _notes()

SOLUTIONS: dict[str, list[Reply]] = {
    "sales-report": _solution(
        ("list_files", {}),
        *_QUARTERS[:2],
        *_script("make_report.py", _SALES_SCRIPT, then_read="report.docx"),
        *_QUARTERS[2:],
        *_script("make_report.py", _SALES_FINAL, then_read="totals.xlsx"),
        answer="Wrote report.docx (revenue per region, best region) and totals.xlsx (sheet "
        "Totals).",
    ),
    "meeting-deck": _solution(
        ("list_files", {}),
        *_NOTES[:3],
        *_script("make_deck.py", _DECK_SCRIPT, then_read="decisions.pptx"),
        *_NOTES[3:],
        answer="Wrote decisions.pptx: one slide per meeting in date order, checked against "
        "every note.",
    ),
    "reorder-code": _solution(
        ("list_files", {}),
        *_read("SPEC.md", "inventory.csv"),
        ("write_file", {"path": "reorder.py", "content": _REORDER_MODULE}),
        *_script("test_reorder.py", _TESTS_SCRIPT),
        *_script("make_orders.py", _ORDERS_SCRIPT, then_read="orders.xlsx"),
        answer="Implemented reorder.py and wrote orders.xlsx (sheet Orders) from inventory.csv.",
    ),
}
"""Each task's scripted agent replies, in order; the last is the answer."""


def scripted_agent(task_id: str) -> ScriptedModel:
    """A :class:`ScriptedModel` replaying the task's solution."""
    if task_id not in SOLUTIONS:
        known = ", ".join(SOLUTIONS)
        raise ConfigError(f"no scripted solution for workspace task {task_id!r}; known: {known}")
    return ScriptedModel(SOLUTIONS[task_id], name=f"scripted:{task_id}")
