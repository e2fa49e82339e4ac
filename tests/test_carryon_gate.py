"""carryon's cost gate (``gate=cost``, the default): the folder is asked only when retiring
the live tail could pay for the folder calls and the cache rewrite; a fold that could not is
a refusal at stage ``gate`` with no folder call; a view over the budget is always folded;
``gate=none`` asks whenever the trigger fires."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from contextfold.core.errors import ConfigError
from contextfold.core.messages import AssistantMessage, Message
from contextfold.models import ScriptedModel
from contextfold.strategies.carryon import CarryOnConfig, CarryOnStrategy
from contextfold.strategies.folding import Folder
from tests.test_carryon import FIRST, compiler, session, tracker
from tests.test_carryon_digest import long_session


def gated(gate: str = "cost") -> tuple[CarryOnStrategy, ScriptedModel]:
    model = ScriptedModel(list(FIRST))
    config = CarryOnConfig.model_validate({"threshold": 100, "gate": gate})
    return CarryOnStrategy(config, folder=Folder(model)), model


def test_a_fold_that_cannot_pay_is_not_asked_and_backs_off() -> None:
    s, model = gated()
    history = session(5)  # a short tail, early in the session
    (record,) = s.fold(history, None)
    assert not record.accepted and record.output["stage"] == "gate" and not record.calls
    assert (record.reason or "").startswith("not asked: retiring the live tail")
    assert record.output["retired"] < record.output["folder"]
    assert model.calls == [] and s.threshold(history) == 200  # doubled, as after a refusal
    none, asked = gated("none")
    (paper,) = none.fold(session(5), None)
    assert paper.accepted and len(asked.calls) == 2  # the paper's behaviour asks


def test_a_long_tail_late_in_a_session_is_worth_a_fold() -> None:
    s, model = gated()
    (record,) = s.fold(long_session(40, lines=60), None)
    assert record.accepted, record.reason
    assert len(model.calls) == 2


def test_a_view_over_the_budget_is_folded_even_when_it_would_not_pay() -> None:
    s, model = gated()
    history = session(5)
    (record,) = s.fold(history, 200)
    assert record.accepted and len(model.calls) == 2


def test_an_unknown_price_table_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="unknown price table 'cheap'"):
        CarryOnStrategy(CarryOnConfig(prices="cheap"), folder=Folder(ScriptedModel([])))


def test_a_folder_that_keeps_being_refused_is_asked_less() -> None:
    def refusing(messages: Sequence[Message], tools: Sequence[Mapping[str, Any]]) -> str:
        return tracker() if "registry" in (messages[0].content or "") else compiler()

    model = ScriptedModel(refusing)
    config = CarryOnConfig(threshold=100, max_doublings=0)  # every step over the trigger
    s = CarryOnStrategy(config, folder=Folder(model))
    history = long_session(20, lines=60)  # a first fold pays if it commits
    records = []
    for _ in range(6):
        records += s.fold(history, None)
        history.append(AssistantMessage("THOUGHT: keep reading."))
    asked = [r for r in records if r.calls]
    assert asked and all(not r.accepted for r in records)
    assert records[0].calls and not records[-1].calls  # asked first, then no longer
    assert records[-1].output["commit_chance_pct"] == 33  # (0 + 1) / (1 + 2)
    assert len(asked) == 1
