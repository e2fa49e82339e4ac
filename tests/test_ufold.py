"""ufold with ScriptedModel folders (summary, to-do, checked extraction, the intent trigger,
ablations, reopening, restore) and its model-free variant (``folder=none``) on small sessions."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from contextfold.core.errors import ConfigError
from contextfold.core.history import History
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    UserMessage,
)
from contextfold.core.pipeline import render_checked
from contextfold.core.store import SQLiteStore
from contextfold.core.view import View
from contextfold.models import ScriptedModel
from contextfold.strategies.folding import Folder, FolderSource
from contextfold.strategies.registry import build_strategy, needs_folder
from contextfold.strategies.ufold import UfoldStrategy
from contextfold.strategies.ufold.fold import REFUSALS
from contextfold.strategies.ufold.log import numbered_log
from tests._ufold_data import TASK, airline, call, noisy

RESERVATION = (
    "reservation ABC123: flight HAT170 on 2024-05-15, economy\n"
    "user mia_li_3668\n"
    "payment credit_card_4421486"
)
SEARCH = "HAT170 2024-05-20 09:00 price 189\nHAT171 2024-05-20 17:00 price 150"


class ScriptedFolder:
    """A ScriptedModel folder answering each schema from its own queue, recording inputs."""

    def __init__(self, **queues: Sequence[Any]) -> None:
        self.queues = {k: [_json(r) for r in v] for k, v in queues.items()}
        self.inputs: dict[str, list[str]] = {}
        self.model = ScriptedModel(self._reply)
        self.folder = Folder(self.model)

    def _reply(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]]) -> str:
        title = str((self.model.response_schema or {}).get("title"))
        self.inputs.setdefault(title, []).append(messages[-1].content or "")
        return self.queues[title].pop(0)


def _json(reply: Any) -> str:
    return reply if isinstance(reply, str) else json.dumps(reply)


def summary(text: str, *todo: str) -> dict[str, Any]:
    return {"summary": text, "todo": [{"task": t, "facts": []} for t in todo]}


def ufold(spec: str, scripted: ScriptedFolder | None) -> UfoldStrategy:
    """The strategy built from ``spec``; every fold adopted unless ``spec`` says how (these
    sessions are too short for a rebuild to pay under the cost rule)."""
    spec = spec if "rebuild=" in spec else f"{spec} rebuild=always"
    built = build_strategy(spec, folders=FolderSource(default="scripted"))
    assert isinstance(built, UfoldStrategy)
    if scripted is not None:
        built.folder = scripted.folder
    return built


def session(store: SQLiteStore | None = None) -> History:
    return airline(
        call(1, "get_reservation", {"id": "ABC123"}, RESERVATION),
        call(2, "search_flights", {"date": "2024-05-20"}, SEARCH),
        [AssistantMessage("HAT170 at 09:00 costs 189. Shall I change it?")],
        [UserMessage("Yes, please.")],
        store=store,
        session_id="s1",
    )


def line_number(history: History, text: str, end: int) -> int:
    _, lines = numbered_log(history, end)
    return next(n for n, line in lines.items() if line.text == text and line.result is not None)


def context(view: View) -> str:
    return next(m.content for m in view.messages if m.content and "[Selected context" in m.content)


def fold_render(s: UfoldStrategy, history: History) -> View:
    s.fold(history, None)
    return render_checked(s, history, None)


def test_a_summary_that_drops_a_constraint_keeps_that_user_message_verbatim() -> None:
    history = session()
    scripted = ScriptedFolder(
        SummaryAnswer=[summary("The user wants ABC123 moved to 2024-05-20.", "change ABC123")],
        ExtractAnswer=[{"blocks": []}],
    )
    s = ufold("ufold", scripted)
    view = fold_render(s, history)
    (record,) = history.folds
    assert record.accepted and record.end == 4 and len(record.calls) == 2
    assert record.output["kept_users"] == [0]  # "300" is not in the summary
    text = context(view)
    assert f"[step 0] user: {TASK}" in text and "1. change ABC123" in text
    assert view.messages[0] == history.system and view.messages[-1] == history[4].message
    assert {e.steps[0] for e in view.elisions} == {0, 1, 2, 3}
    assert s.call_tool("restore", {"step": 0}, history) == TASK


def test_bad_blocks_and_facts_are_dropped_and_counted_and_nothing_is_lost() -> None:
    history = session()
    pay = line_number(history, "payment credit_card_4421486", 4)
    hat = line_number(history, "HAT170 2024-05-20 09:00 price 189", 4)
    action = pay - 3  # the action line of step 1: not an observation
    good = {
        "summary": "card",
        "start_line": pay,
        "end_line": pay,
        "facts": ["credit_card_4421486", "card 4421486 (visa)"],
        "hint": "pay with it",
    }
    blocks = [
        good,
        {"start_line": 999, "end_line": 999, "facts": ["x"]},  # no such line
        {"start_line": action, "end_line": action},  # an action line
        {"start_line": hat, "end_line": hat - 1},  # backwards
        {"start_line": hat, "end_line": hat, "facts": ["HAT170", "price 189"]},
    ]
    scripted = ScriptedFolder(
        SummaryAnswer=[summary("Move ABC123; under 300.")], ExtractAnswer=[{"blocks": blocks}]
    )
    s = ufold("ufold", scripted)
    view = fold_render(s, history)
    (record,) = history.folds
    assert record.accepted
    assert record.output["dropped_blocks"] == 3 and record.output["dropped_facts"] == 1
    text = context(view)
    assert '[step 1] get_reservation {"id": "ABC123"}, line 3:\npayment credit_card_4421486' in text
    assert "facts: credit_card_4421486\n" in text and "(visa)" not in text
    assert "HAT170 2024-05-20 09:00 price 189" in text and "HAT171" not in text
    assert "user mia_li_3668" not in text
    # nothing lost: every step behind the context is restorable, verbatim
    assert all(str(e.restore) == f"restore(step={e.steps[0]})" for e in view.elisions)
    assert s.call_tool("restore", {"step": 1}, history) == RESERVATION
    assert s.call_tool("restore", {"step": 2}, history) == SEARCH
    assert "Numbered log" in scripted.inputs["ExtractAnswer"][0]


def test_a_user_who_changes_their_mind_gets_a_new_todo_list() -> None:
    history = session()
    scripted = ScriptedFolder(
        SummaryAnswer=[
            summary("Move ABC123 to 2024-05-20 under 300.", "change ABC123 to HAT170"),
            summary("The user dropped the change of ABC123 and wants a bag.", "add a bag"),
        ],
        ExtractAnswer=[{"blocks": []}, {"blocks": []}],
    )
    s = ufold("ufold", scripted)
    first = fold_render(s, history)
    assert "change ABC123 to HAT170" in context(first)
    history.append(AssistantMessage("Done: ABC123 now flies HAT170."))
    within = fold_render(s, history)  # same user turn: no fold, same context, prefix kept
    assert len(history.folds) == 1 and within.messages[:3] == first.messages[:3]
    history.append(UserMessage("Actually, undo that and add one bag to ABC123 instead."))
    second = fold_render(s, history)
    assert len(history.folds) == 2 and history.folds[1].end == 6
    text = context(second)
    assert "1. add a bag" in text and "change ABC123 to HAT170" not in text
    asked = scripted.inputs["SummaryAnswer"][1]
    assert "Move ABC123 to 2024-05-20 under 300." in asked  # the previous notes ...
    assert "add one bag" in asked and "Yes, please." not in asked  # ... and only what is new


def test_a_refused_fold_changes_nothing_and_waits_for_the_next_user_message() -> None:
    history = session()
    scripted = ScriptedFolder(
        SummaryAnswer=["{bad", "{still bad", summary("Move ABC123 under 300.")],
        ExtractAnswer=[{"blocks": []}],
    )
    s = ufold("ufold", scripted)
    full = render_checked(build_strategy("full"), history, None)
    assert fold_render(s, history).messages == full.messages
    (record,) = history.folds
    assert not record.accepted and "invalid output after repair" in (record.reason or "")
    assert record.reason is not None and record.reason.startswith(REFUSALS)  # declared
    assert record.output == {"raw": "{still bad"}  # what was refused is kept
    assert s.fold(history, None) == []  # tried once per user turn
    history.append(UserMessage("Hello?"))
    assert fold_render(s, history) and history.folds[-1].accepted


def test_reopened_from_sqlite_renders_the_same_view_without_the_model(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    history = session(store)
    scripted = ScriptedFolder(
        SummaryAnswer=[summary("Move ABC123 under 300.")],
        ExtractAnswer=[{"blocks": [{"start_line": 3, "end_line": 5}]}],
    )
    s = ufold("ufold", scripted)
    view = fold_render(s, history)
    store.close()
    reopened = History.open(SQLiteStore(tmp_path / "s.db"), "s1")
    again = ufold("ufold", ScriptedFolder())  # any call would fail: no replies
    assert again.fold(reopened, None) == []
    assert render_checked(again, reopened, None).messages == view.messages


def test_ablations_extract_false_and_summarize_false() -> None:
    history = session()
    no_extract = ufold("ufold extract=false", ScriptedFolder(SummaryAnswer=[summary("s 300")]))
    view = fold_render(no_extract, history)
    assert history[1].messages[1] in view.messages and history[2].messages[1] in view.messages
    assert len(history.folds[0].calls) == 1  # the summary only
    history = session()
    raw = ScriptedFolder(ExtractAnswer=[{"blocks": []}])
    view = fold_render(ufold("ufold summarize=false", raw), history)
    assert f"[step 0] user: {TASK}" in context(view) and "SummaryAnswer" not in raw.inputs
    with pytest.raises(ConfigError, match="folds nothing"):
        ufold("ufold summarize=false extract=false", None)


def test_trigger_change_folds_only_when_the_folder_sees_a_new_intent() -> None:
    history = session()
    scripted = ScriptedFolder(
        SummaryAnswer=[summary("Move ABC123 under 300."), summary("Now a bag for ABC123.")],
        ExtractAnswer=[{"blocks": []}, {"blocks": []}],
        IntentAnswer=[{"changed": False}, {"changed": True}],
    )
    s = ufold("ufold trigger=change", scripted)
    first = fold_render(s, history)  # the first fold needs no judgment
    history.append(AssistantMessage("Which seat?"))
    history.append(UserMessage("A window seat."))
    kept = fold_render(s, history)
    assert [r.kind for r in history.folds] == ["turn", "intent"]
    assert context(kept) == context(first) and kept.messages[-3:] == (
        history[4].message,
        history[5].message,
        history[6].message,
    )
    history.append(UserMessage("Forget the flight, add a bag instead."))
    changed = fold_render(s, history)
    assert [r.kind for r in history.folds] == ["turn", "intent", "intent", "turn"]
    assert "Now a bag" in context(changed) and history.folds[-1].end == 7
    with pytest.raises(ConfigError, match="needs a folder"):
        build_strategy("ufold folder=none trigger=change")


NOISY = noisy(RESERVATION.replace("\n", " | "))


def model_free_session() -> History:
    return airline(
        call(1, "get_reservation", {"id": "ABC123"}, NOISY),
        [AssistantMessage("Which date exactly?")],
        [UserMessage("The 20th of May, in the economy cabin.")],
    )


def test_model_free_keeps_the_dialogue_and_the_lines_that_match_it() -> None:
    assert not needs_folder("ufold folder=none") and needs_folder("ufold")
    s = build_strategy("ufold folder=none ranked=1 rebuild=always")
    assert isinstance(s, UfoldStrategy) and s.folder is None
    history = model_free_session()
    view = fold_render(s, history)
    (record,) = history.folds
    assert record.accepted and record.calls == () and record.output["model_free"]
    text = context(view)
    assert f"[step 0] user: {TASK}" in text and "[step 2] agent: Which date exactly?" in text
    assert RESERVATION.replace("\n", " | ") in text  # matched: ABC123, mia_li_3668 ...
    assert sum("other_" in line for line in text.splitlines()) <= 1  # at most the BM25 pick
    assert view.total_tokens < render_checked(build_strategy("full"), history, None).total_tokens
    assert s.call_tool("restore", {"step": 1}, history) == NOISY


def test_model_free_ablations_and_the_budget_share() -> None:
    history = model_free_session()
    view = fold_render(build_strategy("ufold folder=none extract=false rebuild=always"), history)  # type: ignore[arg-type]
    assert history[1].messages[1] in view.messages
    history = model_free_session()
    view = fold_render(build_strategy("ufold folder=none summarize=false rebuild=always"), history)  # type: ignore[arg-type]
    assert TASK not in context(view) and "ABC123" in context(view)
    history = model_free_session()
    tiny = build_strategy("ufold folder=none extract_share=0.001 budget=1000 rebuild=always")
    assert "(no line selected)" in context(fold_render(tiny, history))  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="no model-free mode"):
        build_strategy("compact folder=none")
