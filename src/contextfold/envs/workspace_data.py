"""The workspace tasks' input files, generated deterministically, and the values they imply.

Each generator returns the seed files (path -> text) and the facts a scorer checks against,
both computed from the same numbers, never typed in twice. The numbers come from small
arithmetic sequences, so every run (and every Python version) sees the same files.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

__all__ = [
    "Meeting",
    "SalesFacts",
    "StockRow",
    "meeting_notes",
    "reorder_quantity",
    "sales_data",
    "stock_data",
]

REGIONS = ("North", "South", "East", "West")
PRODUCTS = (
    ("Desk lamp", Decimal("24.50")),
    ("Office chair", Decimal("189.00")),
    ("Standing desk", Decimal("412.75")),
    ("Monitor arm", Decimal("64.90")),
    ("Cable tray", Decimal("18.25")),
    ("Footrest", Decimal("37.60")),
)


@dataclass(frozen=True, slots=True)
class SalesFacts:
    units: dict[str, int]
    revenue: dict[str, Decimal]

    def ranking(self) -> list[str]:
        """Regions by revenue, highest first."""
        return sorted(self.revenue, key=lambda r: (-self.revenue[r], r))


def sales_data() -> tuple[dict[str, str], SalesFacts]:
    """One file per quarter, ``data/sales-2025-qN.csv``."""
    header = "month,region,channel,product,units,unit_price"
    files: dict[str, str] = {}
    units: dict[str, int] = {}
    revenue: dict[str, Decimal] = {}
    for m in range(1, 13):
        rows = []
        for i, region in enumerate(REGIONS):
            for c, channel in enumerate(("Online", "Store")):
                for j, (product, price) in enumerate(PRODUCTS):
                    n = (7 * m + 11 * i * i + 5 * j + 3 * m * j + 13 * c) % 41 + 4
                    rows.append(f"2025-{m:02d},{region},{channel},{product},{n},{price}")
                    units[region] = units.get(region, 0) + n
                    revenue[region] = revenue.get(region, Decimal(0)) + n * price
        name = f"data/sales-2025-q{(m - 1) // 3 + 1}.csv"
        files[name] = files.get(name, header + "\n") + "\n".join(rows) + "\n"
    return files, SalesFacts(units, revenue)


@dataclass(frozen=True, slots=True)
class Meeting:
    date: str
    title: str
    decisions: tuple[str, ...]


_TOPICS: tuple[str, ...] = (
    "warehouse move",
    "pricing review",
    "supplier audit",
    "hiring plan",
    "site launch",
)
_TOPICS += ("budget freeze",)
_SENTENCES = (
    "The group went through the open points from the last session one by one.",
    "Several people asked for the figures to be checked against the finance export.",
    "It was noted that the previous estimate had left out the cost of temporary staff.",
    "A longer discussion followed about which teams would carry the extra work.",
    "Nobody objected to moving the review to the following week if data were missing.",
    "The chair summarised the trade-offs before the group agreed on the points below.",
    "Questions about timing were parked until the vendor confirms its delivery dates.",
)


def meeting_notes() -> tuple[dict[str, str], list[Meeting]]:
    files, meetings = {}, []
    for k, topic in enumerate(_TOPICS):
        date = f"2025-{(k * 5) % 12 + 1:02d}-{(k * 7) % 27 + 1:02d}"
        title = f"{topic.capitalize()} meeting"
        decisions = tuple(
            f"{verb} the {topic} {what}"
            for verb, what in (
                ("Approve", f"plan version {k + 2}"),
                ("Assign", f"owner to team {chr(65 + k)}"),
                ("Cap", f"spend at {(k + 3) * 1500} EUR"),
            )[: 2 + k % 2]
        )
        talk = " ".join(_SENTENCES[(k + s) % len(_SENTENCES)] for s in range(60))
        text = (
            f"# {title}\nDate: {date}\nAttendees: Ana, Ben, Chloe, Dev\n\n## Discussion\n"
            f"{talk}\n\n## Decisions\n" + "".join(f"- {d}\n" for d in decisions) + "\n"
            f"## Actions\n- Ben circulates these notes\n- Chloe books the next {topic} slot\n"
        )
        files[f"notes/{topic.replace(' ', '-')}.md"] = text
        meetings.append(Meeting(date, title, decisions))
    return files, sorted(meetings, key=lambda m: m.date)


@dataclass(frozen=True, slots=True)
class StockRow:
    sku: str
    on_hand: int
    daily_demand: int
    lead_time_days: int
    safety_stock: int
    pack_size: int


REVIEW_DAYS = 14
SPEC = f"""# Reorder rule

For each SKU:
- reorder point = daily_demand * lead_time_days + safety_stock
- if on_hand > reorder point, order nothing (quantity 0)
- otherwise order enough to reach reorder point + daily_demand * {REVIEW_DAYS} (the review
  period), rounded UP to a whole number of packs (a multiple of pack_size).

Deliverables:
1. reorder.py defining reorder_quantity(on_hand, daily_demand, lead_time_days, safety_stock,
   pack_size) -> int implementing the rule.
2. orders.xlsx with a sheet named Orders: a header row (sku, quantity), then one row per SKU
   of inventory.csv whose quantity is above 0, in the order of inventory.csv.
"""


def reorder_quantity(
    on_hand: int, daily_demand: int, lead_time_days: int, safety_stock: int, pack_size: int
) -> int:
    """The rule of :data:`SPEC` (the scorer's reference)."""
    point = daily_demand * lead_time_days + safety_stock
    if on_hand > point:
        return 0
    short = point + daily_demand * REVIEW_DAYS - on_hand
    return -(-short // pack_size) * pack_size


def stock_data() -> tuple[dict[str, str], list[StockRow]]:
    rows = [
        StockRow(
            f"SKU-{1000 + 7 * i}",
            (13 * i) % 240,
            i % 9 + 1,
            (3 * i) % 10 + 2,
            (5 * i) % 30,
            (6, 10, 12, 24)[i % 4],
        )
        for i in range(440)
    ]
    header = "sku,on_hand,daily_demand,lead_time_days,safety_stock,pack_size"
    lines = [header] + [
        f"{r.sku},{r.on_hand},{r.daily_demand},{r.lead_time_days},{r.safety_stock},{r.pack_size}"
        for r in rows
    ]
    return {"inventory.csv": "\n".join(lines) + "\n", "SPEC.md": SPEC}, rows
