"""One real fold each for compact, summary, resum, iterresearch and ufold with the embedded
SmolLM2-135M as folder: the JSON-schema grammar makes its output parse; what it says is weak,
so a fold may commit or be refused, and each outcome is checked in full (tests/_folds.py)."""

from __future__ import annotations

import json

import pytest

from contextfold.core.history import History
from contextfold.core.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.strategies.folding import FolderSource
from contextfold.strategies.folding.summarized import REFUSALS
from contextfold.strategies.folding.view import first_user
from contextfold.strategies.registry import build_strategy
from contextfold.strategies.ufold.fold import REFUSALS as UFOLD_REFUSALS
from tests._folds import check_committed, check_refused, fold_once

pytestmark = [pytest.mark.embedded, pytest.mark.slow]


@pytest.fixture(scope="module")
def folders() -> FolderSource:
    return FolderSource(default="local", threads=1)


def _session() -> History:
    history = History(SystemMessage("You are an airline agent."))
    history.append(UserMessage("Change my flight to May 20. My reservation is ABC123."))
    for i, (tool, out) in enumerate(
        [
            ("get_reservation", "reservation ABC123: flight HAT170 on 2024-05-15, economy, 1 bag"),
            (
                "search_flights",
                "HAT170 2024-05-20 09:00 seats 12 price 189\nHAT171 2024-05-20 17:00",
            ),
            ("get_user", "user mia_li_3668, gold member, card ending 7447"),
        ]
    ):
        call = ToolCall(f"c{i}", tool, json.dumps({"id": "ABC123"}))
        history.append(AssistantMessage(None, tool_calls=(call,)), ToolMessage(out, f"c{i}"))
    history.append(AssistantMessage("HAT170 on May 20 at 09:00 costs 189. Shall I change it?"))
    history.append(UserMessage("Yes, please."))
    return history


def _folded(history: History, end: int) -> list[int]:
    """The steps a summary up to ``end`` stands for (the task and latest user stay)."""
    pinned = {first_user(history), history.latest_user_index}
    return [i for i in range(end) if i not in pinned]


@pytest.mark.parametrize(
    "spec",
    [
        "compact budget=120 max_output=48",
        "summary threshold=40 max_output=48",
        "resum budget=120 max_output=48",
        "iterresearch max_output=48",
    ],
)
def test_one_real_fold_with_the_embedded_model(spec: str, folders: FolderSource) -> None:
    history = _session()
    strategy = build_strategy(spec, folders=folders)
    record, was = fold_once(strategy, history)
    if record.accepted:  # the grammar makes the JSON valid; the content is the model's own
        assert record.output["summary"].strip() and record.start == 0
        view = check_committed(strategy, history, record, was, _folded(history, record.end))
        assert view.total_tokens < was.view.total_tokens
        assert record.output["summary"].strip() in view.messages[2].content
    else:  # a refusal is logged with its reason, and changes nothing
        check_refused(strategy, history, record, was, REFUSALS)


def test_one_real_ufold_turn_with_the_embedded_model(folders: FolderSource) -> None:
    """Summary and extraction by SmolLM2-135M: the grammar makes each reply parse; the
    runtime's checks decide what of its extraction is kept."""
    history = _session()
    strategy = build_strategy("ufold max_output=96 rebuild=always", folders=folders)
    record, was = fold_once(strategy, history)
    assert record.kind == "turn" and record.end == len(history) - 1
    if record.accepted:
        assert record.output["summary"].strip()
        assert record.output["dropped_blocks"] >= 0 and record.output["dropped_facts"] >= 0
        view = check_committed(strategy, history, record, was, range(record.end))
        assert {e.steps[0] for e in view.elisions} == set(range(record.end))
        # not asserted smaller: on a session this short ufold's frame (headers, to-do, the
        # selected lines) can outweigh what it folds; its rebuild rule, not a check, keeps that
        # from being adopted (rebuild=always here adopts it anyway)
    else:
        check_refused(strategy, history, record, was, UFOLD_REFUSALS)


def test_the_embedded_folder_closes_its_summary(folders: FolderSource) -> None:
    """Greedy decoding alone made SmolLM2-135M repeat one phrase until the 512-token cap on
    this fold, so its JSON never closed and the fold was refused; the repeat penalty on
    schema-bound replies lets the reply end and the fold commit."""
    history = _session()
    strategy = build_strategy("summary threshold=40", folders=folders)
    record, was = fold_once(strategy, history)
    assert record.accepted, record.reason
    assert record.calls[-1].completion_tokens < 512
    check_committed(strategy, history, record, was, _folded(history, record.end))
