"""carryon with ScriptedModel folders: committed folds with versioned carriers, refusals
(steps outside the tail, stale versions, a contradicted file), back-off, obligations capped,
a process killed during a commit, and reopening from SQLite."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage, Message, SystemMessage, UserMessage
from contextfold.core.meter import Meter
from contextfold.core.pipeline import render_checked
from contextfold.core.protocols import Folding
from contextfold.core.store import SQLiteStore
from contextfold.models import ScriptedModel
from contextfold.strategies.carryon import CarryOnConfig, CarryOnStrategy
from contextfold.strategies.carryon.grounder import Grounder
from contextfold.strategies.carryon.state import Candidate, state_from_log
from contextfold.strategies.folding import Folder, FolderSource
from contextfold.strategies.registry import build_strategy

WRITER = Path(__file__).with_name("_carryon_writer.py")
FILE = {"type": "external_object", "description": "the report", "location": "./out/report.md"}
INFO = {"type": "information_product", "description": "measurements", "evidence_steps": [3]}


def tracker(*cands: Mapping[str, Any]) -> str:
    return json.dumps({"candidates": list(cands)})


def compiler(*updates: Mapping[str, Any], **ec: Any) -> str:
    return json.dumps({"updates": list(updates), "ec": {"focus": "write the report", **ec}})


ADD_FILE = {
    "op": "add",
    "kind": "external_object",
    "name": "report",
    "location": "out/report.md",
    "candidate_id": "c1",
    "candidate_version": 1,
    "progress": "intro written",
    "source_steps": [2],
}
ADD_INFO = {
    "op": "add",
    "kind": "information_product",
    "name": "measurements",
    "candidate_id": "c2",
    "candidate_version": 1,
    "source_steps": [3],
    "claims": [
        {"id": "m1", "proposition": "load at row 3", "value": "14.685", "source_steps": [3]}
    ],
}
FIRST = [tracker({**FILE, "evidence_steps": [2]}, INFO), compiler(ADD_FILE, ADD_INFO)]


def carryon(replies: Any, spec: str = "", **options: Any) -> CarryOnStrategy:
    config = CarryOnConfig.model_validate({"threshold": 100, "gate": "none", **options})
    return CarryOnStrategy(config, folder=Folder(ScriptedModel(replies)))


def session(steps: int, history: History | None = None) -> History:
    if history is None:
        history = History(SystemMessage("You write lab reports."))
    if not len(history):
        history.append(UserMessage("Complete the Young's modulus report."))
    for _ in range(steps):
        history.append(AssistantMessage(f"step {len(history)}: " + "measured and wrote " * 12))
    return history


def test_a_committed_fold_versions_carriers_and_carries_the_others_forward() -> None:
    revise = {
        "op": "revise",
        "kind": "information_product",
        "carrier_id": "info:measurements",
        "base_version": 1,
        "candidate_id": "c2",
        "candidate_version": 2,
        "source_steps": [7],
        "claims": [
            {
                "op": "modify",
                "id": "m1",
                "proposition": "load at row 3",
                "value": "14.69",
                "source_steps": [7],
            }
        ],
    }
    s = carryon([*FIRST, tracker({**INFO, "id": "c2", "evidence_steps": [7]}), compiler(revise)])
    history = session(5)
    (first,) = s.fold(history, None)
    assert first.accepted, first.reason
    state, _ = s.state(history)
    assert state.cut == 6 and [c.id for c in state.carriers] == [
        "obj:out/report.md",
        "info:measurements",
    ]
    assert state.carriers[0].grounding.startswith("unverified")  # no workspace: replay
    view = render_checked(s, history, None)
    assert view.messages[1] == history[0].message and "14.685" in view.messages[2].content
    assert len(view.messages) == 3 and {e.steps[0] for e in view.elisions} == set(range(1, 6))
    assert s.call_tool("restore", {"step": 3}, history) == history[3].message.content
    session(4, history)
    (second,) = s.fold(history, None)
    assert second.accepted, second.reason
    new, _ = s.state(history)
    assert new.carriers[0] == state.carriers[0]  # untouched: carried forward as it was
    assert new.carriers[1].version == 2 and new.carriers[1].claims[0].value == "14.69"
    assert second.output["persistence"] == {
        "retained": 1,
        "updated": 1,
        "added": 0,
        "retired": 0,
        "obligations_dropped": 0,
    }


def test_a_step_outside_the_tail_is_refused_and_nothing_changes() -> None:
    stray = {**ADD_INFO, "name": "other", "candidate_id": "", "source_steps": [1]}
    s = carryon([*FIRST, tracker(), compiler(stray)])
    history = session(5)
    s.fold(history, None)
    before = render_checked(s, history, None)
    session(4, history)
    (record,) = s.fold(history, None)
    assert not record.accepted and "[1] lie outside the folded tail" in (record.reason or "")
    assert record.output["stage"] == "validation"
    assert s.state(history)[0].cut == 6
    assert render_checked(s, history, None).messages[:3] == before.messages


def test_a_stale_carrier_version_is_refused() -> None:
    stale = {
        "op": "revise",
        "kind": "information_product",
        "carrier_id": "info:measurements",
        "base_version": 3,
        "source_steps": [7],
    }
    s = carryon([*FIRST, tracker(), compiler(stale)])
    history = session(5)
    s.fold(history, None)
    session(4, history)
    (record,) = s.fold(history, None)
    assert not record.accepted
    assert "carrier info:measurements is at version 1" in (record.reason or "")


def test_a_fold_committed_meanwhile_makes_the_running_one_stale() -> None:
    history = session(5)
    replies = iter(FIRST)

    def reply(messages: Sequence[Message], tools: Sequence[Mapping[str, Any]]) -> str:
        text = next(replies)
        if "compile" in (messages[0].content or ""):  # another writer commits first
            history.record_fold(other)
        return text

    s = carryon(reply)
    other = CarryOnStrategy(s.config, folder=Folder(ScriptedModel(FIRST))).fold(session(5), None)[0]
    (record,) = s.fold(history, None)
    assert not record.accepted and "stale state" in (record.reason or "")


def test_a_file_the_grounder_contradicts_is_not_compiled(tmp_path: Path) -> None:
    s = carryon(FIRST, workspace=str(tmp_path))
    history = session(5)
    (record,) = s.fold(history, None)
    assert not record.accepted and "grounder supported" in (record.reason or "")
    assert {"predicate": "exists", "verdict": "contradicted"}.items() <= record.output["grounding"][
        0
    ].items()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.md").write_text("# Report\nintro")  # made after the start
    s = carryon(FIRST, workspace=str(tmp_path))
    (tmp_path / "out" / "report.md").write_text("# Report\nintro, then more")
    (record,) = s.fold(session(5), None)
    assert record.accepted, record.reason
    assert record.output["state"]["carriers"][0]["grounding"] == "supported"


def test_the_grounder_rereads_a_document_that_changed_between_checks(tmp_path: Path) -> None:
    from docx import Document

    grounder = Grounder(tmp_path)
    cand = Candidate(
        id="obj:r.docx", type="external_object", description="r", location="r.docx",
        expected_text="final",
    )  # fmt: skip

    def write(text: str) -> dict[str, str]:
        doc = Document()
        doc.add_paragraph(text)
        doc.save(str(tmp_path / "r.docx"))
        return {c.predicate: c.verdict for c in grounder.check(cand)}

    assert write("final figures")["text_present"] == "supported"
    assert write("draft figures")["text_present"] == "contradicted"
    (tmp_path / "r.docx").write_bytes(b"not a zip")
    assert grounder.check(cand)[-1].verdict == "contradicted"  # opens
    assert write("final again")["text_present"] == "supported"


def test_refused_folds_double_the_threshold_and_a_commit_resets_it() -> None:
    s = carryon(["{bad", "{bad"] * 3 + FIRST)
    history = session(0)
    thresholds = []
    while not (history.folds and history.folds[-1].accepted):
        session(1, history)
        thresholds.append(s.threshold(history))
        s.fold(history, None)
    assert [r.accepted for r in history.folds] == [False, False, False, True]
    assert sorted(set(thresholds)) == [100, 200, 400, 800]
    assert s.threshold(history) == 100


def test_open_obligations_are_capped_at_eight() -> None:
    many = [{"text": f"Fill cell {k}", "source_steps": [2]} for k in range(10)]
    done = {"text": "Save the file", "resolved": True, "evidence_steps": [4]}
    s = carryon([FIRST[0], compiler(ADD_FILE, obligations=[*many, done])])
    history = session(5)
    (record,) = s.fold(history, None)
    ec = s.state(history)[0].ec
    assert (
        len(ec.open_obligations) == 8 and record.output["persistence"]["obligations_dropped"] == 2
    )
    text = render_checked(s, history, None).messages[2].content
    assert "8. Fill cell 7" in text and "Fill cell 8" not in text
    assert "claimed resolved: Save the file (evidence steps 4)" in text


def test_ablations_keep_only_their_part() -> None:
    only_ec = carryon([FIRST[0], compiler(ADD_FILE)], carriers=False)
    history = session(5)
    assert only_ec.fold(history, None)[0].accepted
    text = render_checked(only_ec, history, None).messages[2].content
    assert "# Execution context" in text and "carriers" not in text
    only_carriers = carryon(FIRST, ec=False)
    history = session(5)
    assert only_carriers.fold(history, None)[0].accepted
    text = render_checked(only_carriers, history, None).messages[2].content
    assert "report" in text and "# Execution context" not in text


def test_reopened_from_sqlite_gives_the_same_view(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    history = session(5, History(SystemMessage("sys"), store=store, session_id="s"))
    s = carryon(FIRST)
    s.fold(history, None)
    session(1, history)
    view = render_checked(s, history, None)
    store.close()
    reopened = History.open(SQLiteStore(tmp_path / "s.db"), "s")
    assert render_checked(carryon([]), reopened, None).messages == view.messages


def test_a_process_killed_during_commits_leaves_a_whole_state(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    acked = [int(proc.stdout.readline() or -1) for _ in range(25)]
    os.kill(proc.pid, signal.SIGKILL)  # the child is still folding, likely mid-commit
    proc.wait(timeout=30)
    proc.stdout.close()
    assert proc.stderr is not None and proc.returncode == -signal.SIGKILL, proc.stderr.read()
    proc.stderr.close()
    history = History.open(SQLiteStore(path), "carry")
    state, refused = state_from_log(history.folds, "carryon")
    assert refused == 0 and state.commits >= acked[-1] == 25
    assert [c.version for c in state.carriers] == [state.commits] * 2  # never a mix
    assert state.ec.focus == f"round {state.commits}"
    render_checked(carryon([]), history, None)


def test_built_by_name_with_ablations_and_cgs_summarises_as_carryon() -> None:
    source = FolderSource(default="scripted")
    built = build_strategy("carryon carriers=false ec=true threshold=50 gate=none", folders=source)
    assert isinstance(built, CarryOnStrategy) and built.config.carriers is False
    cgs = build_strategy("cgs threshold=50", folders=source)
    cgs.folder = Folder(ScriptedModel(['{"summary": "# Task and current focus\\nreport"}']))  # type: ignore[attr-defined]
    history = session(5)
    assert isinstance(cgs, Folding)
    (record,) = cgs.fold(history, None)
    assert record.accepted and record.kind == "cgs"
    asked = cgs.folder.model.calls[0].messages[0].content  # type: ignore[attr-defined]
    assert "# Continuation carriers" in asked and "## Situated state" in asked


def test_the_meter_adds_up_carrier_persistence() -> None:
    s = carryon(FIRST)
    history = session(5)
    meter = Meter()
    meter.record_folds(s.fold(history, None))
    figures = meter.fold_summary()
    assert (figures["carriers_retained"], figures["carriers_updated"]) == (0, 0)
    assert figures["carriers_added"] == 2


def test_a_new_carrier_that_carries_nothing_is_refused() -> None:
    empty = {**ADD_INFO, "candidate_id": "c1", "claims": []}
    s = carryon([tracker(INFO), compiler(empty)])
    (record,) = s.fold(session(5), None)
    assert not record.accepted
    assert "carries nothing: an information product needs at least one claim" in (
        record.reason or ""
    )
