"""The context-folding agent tutorial's example tasks, as data with checkable answers.

:func:`score` returns 1.0 for a right answer; the expected values are derived from the task data
(:class:`BudgetSpec`, :class:`StudySpec`), never typed in twice.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from contextfold.core.errors import ConfigError

__all__ = [
    "BUDGET",
    "STUDY_PLAN",
    "TUTORIAL_TASKS",
    "BudgetSpec",
    "StudySpec",
    "TutorialTask",
    "get_task",
    "numbers_in",
    "score",
]

_CENT = Decimal("0.01")


@dataclass(frozen=True, slots=True)
class TutorialTask:
    """One task: its prompt, a checker scoring an answer text in [0, 1], and a reference answer
    that scores 1.0."""

    id: str
    prompt: str
    check: Callable[[str], float]
    reference: str


# --------------------------------------------------------------------------- budget


@dataclass(frozen=True, slots=True)
class BudgetSpec:
    """Items ``(name, unit price, quantity)``; tax on the subtotal, then a contingency on the
    taxed amount; only the final total is rounded (half up, to the cent).

    The answer must state the final total (items with prices and quantities, a sales tax rate and a
    contingency rate) to the cent: any number in the text that rounds to the expected cents counts;
    ``$`` and thousands separators are fine.
    """

    items: tuple[tuple[str, Decimal, int], ...]
    tax_rate: Decimal
    contingency_rate: Decimal

    @property
    def subtotal(self) -> Decimal:
        return sum((price * qty for _, price, qty in self.items), Decimal(0))

    @property
    def total(self) -> Decimal:
        taxed = self.subtotal * (1 + self.tax_rate)
        exact = taxed * (1 + self.contingency_rate)
        return exact.quantize(_CENT, rounding=ROUND_HALF_UP)

    def prompt(self) -> str:
        lines = [f"- {name}: {qty} x ${price}" for name, price, qty in self.items]
        return (
            "Compute the total budget for this purchase.\n"
            + "\n".join(lines)
            + f"\nAdd {float(self.tax_rate * 100):g}% sales tax to the subtotal, then add a "
            f"{float(self.contingency_rate * 100):g}% contingency on the taxed amount. "
            "Round only the final total, to the cent, and state it in dollars."
        )

    def check(self, answer: str) -> float:
        """1.0 if some number in ``answer`` rounds to the expected total's cents, else 0.0."""
        expected = self.total
        for value in numbers_in(answer):
            if value.quantize(_CENT, rounding=ROUND_HALF_UP) == expected:
                return 1.0
        return 0.0


_NUMBER = re.compile(r"(?<![\d.])-?\$?\s?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?")


def numbers_in(text: str) -> list[Decimal]:
    """The decimal numbers in ``text``; ``$1,786.41`` reads as 1786.41."""
    found = []
    for match in _NUMBER.finditer(text):
        digits = match.group(1).replace(",", "") + (match.group(2) or "")
        sign = "-" if match.group(0).startswith("-") else ""
        found.append(Decimal(sign + digits))
    return found


# --------------------------------------------------------------------------- study plan


@dataclass(frozen=True, slots=True)
class StudySpec:
    """Subjects with the hours each needs, over ``days`` days of at most ``max_per_day`` hours.

    The answer must name every day and subject, give each subject its hours in total, and keep each
    day under the cap. Hours are read per day section (from ``Day N`` to the next) from pieces that
    name exactly one subject and one ``<number> h|hr|hrs|hour|hours``.
    """

    subjects: tuple[tuple[str, float], ...]
    days: int
    max_per_day: float

    def prompt(self) -> str:
        need = ", ".join(f"{name} {hours:g} hours" for name, hours in self.subjects)
        return (
            f"Plan a {self.days}-day study schedule (Day 1 to Day {self.days}). "
            f"Subjects and the total hours each needs: {need}. "
            f"Study at most {self.max_per_day:g} hours a day. For each day, list every subject "
            "studied that day with its hours, e.g. 'Math: 2 hours'."
        )

    def check(self, answer: str) -> float:
        """Mean of: days named, subjects named, subjects with the right total hours, daily cap
        kept (each in [0, 1])."""
        lower = answer.lower()
        names = [name for name, _ in self.subjects]
        days = [d for d in range(1, self.days + 1) if re.search(rf"\bday\s*{d}\b", lower)]
        named = [n for n in names if n.lower() in lower]
        per_day = _day_hours(lower, [n.lower() for n in names])
        totals = {
            n.lower(): sum(day.get(n.lower(), 0.0) for day in per_day.values()) for n in names
        }
        right = [n for n, hours in self.subjects if abs(totals[n.lower()] - hours) < 1e-6]
        capped = all(sum(day.values()) <= self.max_per_day + 1e-6 for day in per_day.values())
        parts = [
            len(days) / self.days,
            len(named) / len(names),
            len(right) / len(names),
            1.0 if capped and per_day else 0.0,
        ]
        return sum(parts) / len(parts)


_DAY = re.compile(r"\bday\s*(\d+)\b")
_HOURS = re.compile(r"(\d+(?:\.\d+)?)\s*(?:hours|hour|hrs|hr|h)\b")
_PIECES = re.compile(r"[,;|\n+]|\band\b")


def _day_hours(text: str, subjects: list[str]) -> dict[int, dict[str, float]]:
    """Hours per subject in each ``Day N`` section of a lower-cased answer."""
    marks = list(_DAY.finditer(text))
    sections: dict[int, dict[str, float]] = {}
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        day = sections.setdefault(int(mark.group(1)), {})
        for piece in _PIECES.split(text[mark.end() : end]):
            hit = [s for s in subjects if s in piece]
            if len(hit) == 1 and (hours := _nearest_hours(piece, piece.index(hit[0]))):
                day[hit[0]] = day.get(hit[0], 0.0) + hours
    return sections


def _nearest_hours(piece: str, at: int) -> float | None:
    """The ``<number> hours`` in ``piece`` closest to position ``at``, if any."""
    found = [(abs(m.start() - at), float(m.group(1))) for m in _HOURS.finditer(piece)]
    return min(found)[1] if found else None


# --------------------------------------------------------------------------- registry


def _budget_reference(spec: BudgetSpec) -> str:
    return f"The subtotal is ${spec.subtotal}; the final total is ${spec.total:,}."


def _study_reference(spec: StudySpec) -> str:
    """A greedy plan that fills each day up to the cap, in subject order."""
    left = {name: hours for name, hours in spec.subjects}
    lines = []
    for day in range(1, spec.days + 1):
        room, parts = spec.max_per_day, []
        for name in left:
            take = min(room, left[name])
            if take > 0:
                parts.append(f"{name}: {take:g} {'hour' if take == 1 else 'hours'}")
                left[name] -= take
                room -= take
        lines.append(f"Day {day}: " + ", ".join(parts))
    return "\n".join(lines)


BUDGET_SPEC = BudgetSpec(
    items=(
        ("laptop", Decimal("899.99"), 1),
        ("monitor", Decimal("189.50"), 2),
        ("keyboard", Decimal("74.25"), 1),
        ("software licence", Decimal("49.00"), 3),
    ),
    tax_rate=Decimal("0.0825"),
    contingency_rate=Decimal("0.10"),
)
STUDY_SPEC = StudySpec(
    subjects=(("Math", 5.0), ("Physics", 4.0), ("Chemistry", 3.0)), days=3, max_per_day=4.0
)

BUDGET = TutorialTask(
    "budget", BUDGET_SPEC.prompt(), BUDGET_SPEC.check, _budget_reference(BUDGET_SPEC)
)
STUDY_PLAN = TutorialTask(
    "study-plan", STUDY_SPEC.prompt(), STUDY_SPEC.check, _study_reference(STUDY_SPEC)
)
TUTORIAL_TASKS: dict[str, TutorialTask] = {t.id: t for t in (BUDGET, STUDY_PLAN)}
"""The tutorial's tasks by id."""


def get_task(task: TutorialTask | str) -> TutorialTask:
    """A task by id (or the task itself); unknown ids raise :class:`ConfigError`."""
    if isinstance(task, TutorialTask):
        return task
    try:
        return TUTORIAL_TASKS[task]
    except KeyError:
        known = ", ".join(TUTORIAL_TASKS)
        raise ConfigError(f"unknown tutorial task {task!r}; known: {known}") from None


def score(task: TutorialTask | str, answer_text: str) -> float:
    """The task's score of an answer text, clamped to [0, 1]."""
    return min(1.0, max(0.0, float(get_task(task).check(answer_text or ""))))
