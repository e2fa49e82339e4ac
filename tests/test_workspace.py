"""The workspace environment and its tasks: real files, scorers that open them, scripted
solutions (score 1) and wrong ones (score 0), and carryon grounding its external objects in
the workspace during a live run (ScriptedModel agent and folder)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from contextfold.agent import Agent
from contextfold.bench.live import LiveResult, make_model, run_live
from contextfold.core.errors import ConfigError
from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage, Message, SystemMessage
from contextfold.core.tokens import ApproxCounter
from contextfold.envs.workspace import WorkspaceEnv
from contextfold.envs.workspace_solutions import SOLUTIONS, scripted_agent
from contextfold.envs.workspace_tasks import WORKSPACE_SYSTEM, WORKSPACE_TASKS
from contextfold.models import Reply, ScriptedModel
from contextfold.models._tools import to_assistant
from contextfold.strategies.folding import FolderSource
from contextfold.strategies.folding.steps import estimate_tokens
from contextfold.strategies.registry import build_strategy


def solve(task_id: str, replies: Sequence[Reply]) -> tuple[float, History]:
    task = WORKSPACE_TASKS[task_id]
    env = WorkspaceEnv(task.seed)
    try:
        history = History(SystemMessage(WORKSPACE_SYSTEM))
        agent = Agent(ScriptedModel(replies), build_strategy("full"), env, history=history)
        agent.run(task=task.prompt)
        return task.check(env.root), history
    finally:
        env.close()


def edited(replies: Sequence[Reply], old: str, new: str) -> list[Reply]:
    """The replies with ``old`` replaced by ``new`` in every written file's content."""
    out: list[Reply] = []
    for n, reply in enumerate(replies):
        message = to_assistant(reply, position=n)
        calls = []
        for call in message.tool_calls:
            args = json.loads(call.arguments)
            if "content" in args:
                args["content"] = args["content"].replace(old, new)
            calls.append({"id": call.id, "name": call.name, "arguments": json.dumps(args)})
        out.append(
            {
                "content": message.content,
                "tool_calls": [{"id": c["id"], "type": "function", "function": c} for c in calls],
            }
            if calls
            else reply
        )
    return out


@pytest.mark.parametrize("task_id", sorted(WORKSPACE_TASKS))
def test_each_scripted_solution_scores_1_and_its_run_passes_the_fold_trigger(
    task_id: str,
) -> None:
    reward, history = solve(task_id, SOLUTIONS[task_id])
    assert reward == 1.0
    assert sum(estimate_tokens(s) for s in history.steps) > 6000
    assert not any("error" in r.content[:8] for s in history.steps for r in s.results)


WRONG = {
    "sales-report": ('Decimal(row["unit_price"])', "1"),  # revenue = units
    "meeting-deck": ("meetings.sort()", "meetings.sort(reverse=True)"),
    "reorder-code": ("return -(-short // pack_size) * pack_size", "return short"),
}


@pytest.mark.parametrize("task_id", sorted(WORKSPACE_TASKS))
def test_a_wrong_solution_scores_0(task_id: str) -> None:
    old, new = WRONG[task_id]
    wrong = edited(SOLUTIONS[task_id], old, new)
    assert wrong != SOLUTIONS[task_id]
    assert solve(task_id, wrong)[0] == 0.0


@pytest.mark.parametrize("task_id", sorted(WORKSPACE_TASKS))
def test_an_untouched_workspace_scores_0(task_id: str) -> None:
    assert solve(task_id, ["Done."])[0] == 0.0


def test_the_tools_keep_to_the_workspace_and_read_documents(tmp_path: Path) -> None:
    env = WorkspaceEnv({"a.txt": "one\ntwo"}, root=tmp_path)
    assert "outside the workspace" in env.call("read_file", {"path": "../etc/passwd"})
    assert "outside the workspace" in env.call("write_file", {"path": "/tmp/x", "content": ""})
    assert env.call("read_file", {"path": "a.txt"}) == "   1  one\n   2  two"
    assert "binary document" in env.call("write_file", {"path": "r.docx", "content": "x"})
    script = "from docx import Document\nd = Document()\nd.add_paragraph('hello doc')\n"
    env.call("write_file", {"path": "make.py", "content": script + "d.save('r.docx')\n"})
    assert env.call("run_python", {"path": "make.py"}) == "exit status 0"
    assert "hello doc" in env.call("read_file", {"path": "r.docx"})
    (tmp_path / "bad.xlsx").write_text("not a zip")
    assert env.call("read_file", {"path": "bad.xlsx"}).startswith("error: bad.xlsx does not open")
    env.call("write_file", {"path": "boom.py", "content": "raise SystemExit('no')"})
    assert env.call("run_python", {"path": "boom.py"}) == "exit status 1\nstderr:\nno"
    assert env.call("nope", {}).startswith("error: unknown tool 'nope'")
    env.close()
    assert tmp_path.is_dir()  # a given root is not removed


def test_model_scripted_needs_a_workspace_task() -> None:
    with pytest.raises(ConfigError, match="workspace:TASK"):
        make_model("scripted", env_spec="tutorial:budget")
    with pytest.raises(ConfigError, match="known: sales-report"):
        make_model("scripted", env_spec="workspace:nope")


class ScriptedFolder:
    """A folder's replies, by stage: the tracker proposes one file, the compiler adds it."""

    def __init__(self, location: str, expected_text: str, steps: list[int]) -> None:
        self.candidate = {
            "type": "external_object",
            "description": "the report the task asks for",
            "location": location,
            "expected_text": expected_text,
            "evidence_steps": steps,
        }
        self.add = {
            "op": "add",
            "kind": "external_object",
            "name": "report",
            "location": location,
            "candidate_id": "c1",
            "candidate_version": 1,
            "progress": "revenue per region written; regenerate with make_report.py",
            "source_steps": steps,
        }
        self.model = ScriptedModel(self.reply)

    def reply(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]]) -> str:
        schema = self.model.response_schema or {}
        if "candidates" in schema.get("properties", {}):
            return json.dumps({"candidates": [self.candidate]})
        ec = {"focus": "check the report", "continuation": "read totals.xlsx"}
        return json.dumps({"updates": [self.add], "ec": ec})


def live(strategy: str, folder: ScriptedFolder | None = None) -> LiveResult:
    make: Callable[[], Any] = lambda: scripted_agent("sales-report")  # noqa: E731
    folders = FolderSource(default="agent", agent=lambda: folder.model) if folder else None
    return run_live(
        "workspace:sales-report", None, strategy, make, counter=ApproxCounter(), folders=folders
    )


def test_carryon_grounds_the_report_it_keeps_in_the_workspace() -> None:
    result = live("carryon gate=none", ScriptedFolder("report.docx", "Sales report 2025", [5, 6]))
    assert result.reward == 1.0 and result.detail["grounded_in_workspace"] is True
    assert result.detail["folds_attempted"] == result.detail["folds_committed"] == 1
    (record,) = result.history.folds
    (carrier,) = record.output["state"]["carriers"]
    assert carrier["id"] == "obj:report.docx" and carrier["grounding"] == "supported"
    verdicts = {c["predicate"]: c["verdict"] for c in record.output["grounding"]}
    assert verdicts == dict.fromkeys(
        ("exists", "non_empty", "changed", "opens", "text_present"), "supported"
    )


def test_a_report_the_grounder_contradicts_is_not_committed() -> None:
    result = live("carryon gate=none", ScriptedFolder("report.docx", "Quarterly figures", [5, 6]))
    assert result.reward == 1.0  # the agent goes on; only the fold is refused
    assert result.detail["folds_committed"] == 0 and result.detail["folds_attempted"] >= 1
    record = result.history.folds[0]
    assert "grounder supported" in (record.reason or "")
    text = [c for c in record.output["grounding"] if c["predicate"] == "text_present"]
    assert text[0]["verdict"] == "contradicted"
    missing = live("carryon gate=none", ScriptedFolder("summary.docx", "", [5])).history.folds[0]
    assert not missing.accepted and missing.output["grounding"][0]["verdict"] == "contradicted"


def test_full_runs_the_workspace_without_folds() -> None:
    result = live("full")
    assert result.reward == 1.0 and result.detail["folds_attempted"] == 0
    assert isinstance(result.history.steps[-1].message, AssistantMessage)


def test_the_run_command_scores_a_workspace_task(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from contextfold.cli import app

    out = tmp_path / "run.json"
    argv = ["run", "--env", "workspace:reorder-code", "--model", "scripted", "-s", "full"]
    res = CliRunner().invoke(app, [*argv, "--json", str(out)])
    assert res.exit_code == 0, res.output
    summary = json.loads(out.read_text())
    assert summary["reward"] == 1.0 and summary["folds_attempted"] == 0
    bad = CliRunner().invoke(app, ["run", "--env", "workspace:nope", "--model", "scripted"])
    assert bad.exit_code != 0 and "unknown workspace task 'nope'" in bad.output
    assert "Traceback" not in bad.output


def test_only_a_strategy_with_a_grounder_is_pointed_at_the_workspace() -> None:
    from contextfold.core.protocols import Grounded

    folders = FolderSource(default="scripted")
    assert isinstance(build_strategy("carryon", folders=folders), Grounded)
    assert not isinstance(build_strategy("cgs", folders=folders), Grounded)
    assert not isinstance(build_strategy("full"), Grounded)
