"""Checks of one real fold, for the tests that fold with the embedded SmolLM2-135M.

What the tiny folder writes decides whether a fold commits, so these tests accept either
outcome, but check each one fully: the folder was called (tokens in, tokens out, time), the
history's steps are untouched and its fold log gained exactly the fold's records; a refused
fold gives a reason the strategy declares and leaves the view as it was; a committed fold's
view elides the folded steps, each restorable verbatim through the strategy's own tool.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from contextfold.core.folds import FoldRecord
from contextfold.core.history import History, Step
from contextfold.core.pipeline import render_checked
from contextfold.core.protocols import Folding, Strategy, ToolProvider
from contextfold.core.view import View


@dataclass(frozen=True, slots=True)
class Before:
    """The history and the strategy's view just before a fold."""

    steps: tuple[Step, ...]
    folds: int
    view: View


def before(strategy: Strategy, history: History) -> Before:
    return Before(tuple(history.steps), len(history.folds), render_checked(strategy, history, None))


def fold_once(strategy: Strategy, history: History) -> tuple[FoldRecord, Before]:
    """Run the one fold due now; check the folder ran and only the fold log grew. Returns the
    fold's record and what was there before it."""
    assert isinstance(strategy, Folding)
    was = before(strategy, history)
    records = strategy.fold(history, None)
    assert len(records) == 1, records
    outcome = "committed" if records[0].accepted else f"refused: {records[0].reason}"
    print(f"{type(strategy).__name__} fold {outcome}")  # shown with pytest -rP
    check_called(records[0])
    check_logged(history, was, records)
    return records[0], was


def check_called(record: FoldRecord) -> None:
    """The folder model ran for this record: it read a prompt and wrote a reply."""
    assert record.calls, f"no folder call in {record.kind} record ({record.reason})"
    for call in record.calls:
        assert call.prompt_tokens > 0 and call.completion_tokens > 0 and call.ms > 0, call


def check_logged(history: History, was: Before, records: list[FoldRecord]) -> None:
    """A fold never changes the steps; it appends its records to the fold log, nothing else."""
    assert tuple(history.steps) == was.steps
    assert list(history.folds[was.folds :]) == records


def check_refused(
    strategy: Strategy, history: History, record: FoldRecord, was: Before, reasons: tuple[str, ...]
) -> None:
    """A declared reason, and the view exactly as before the fold."""
    assert record.reason is not None and record.reason.startswith(reasons), record.reason
    assert render_checked(strategy, history, None) == was.view


def check_committed(
    strategy: Strategy, history: History, record: FoldRecord, was: Before, folded: Collection[int]
) -> View:
    """No reason; every step in ``folded`` is elided from the new view and restores verbatim
    through the strategy's tool. Returns the new view."""
    assert record.reason is None
    after = render_checked(strategy, history, None)
    assert after != was.view
    paths = {e.steps[0]: e.restore for e in after.elisions if len(e.steps) == 1}
    assert set(folded) <= set(paths), f"steps {sorted(folded)} not all elided: {sorted(paths)}"
    assert isinstance(strategy, ToolProvider)
    for index in folded:
        path = paths[index]
        assert path is not None, f"step {index} is elided without a restore path"
        text = strategy.call_tool(path.tool, path.as_dict(), history)
        step = history[index]
        originals = [r.content for r in step.results] or [step.message.content or ""]
        assert all(part in text for part in originals), (index, text)
    return after
