"""The SWE-agent importer (``*.traj``) on small files written here: actions as tool calls,
each team member's conversation a session, the outcome from SWE-bench's results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from contextfold.cli import app
from contextfold.core.errors import ImportFormatError
from contextfold.core.messages import AssistantMessage, ToolMessage, UserMessage
from contextfold.core.tokens import ApproxCounter
from contextfold.importers import Trajectory, iter_trajectories, load_file
from contextfold.importers.probe import Probe
from contextfold.importers.registry import claiming

PLAN = 'plan\n{"entry": "Reproducer"}\nend_of_plan'


def said(role: str, content: str, agent: str | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"role": role, "content": content, **extra}
    if agent is not None:
        out["agent"] = agent
    return out


def act(thought: str, action: str, agent: str | None = None) -> dict[str, Any]:
    """An assistant message as SWE-agent records it: the thought, the action in a fence."""
    content = f"{thought}\n\n```\n{action}\n```"
    return said("assistant", content, agent, thought=thought, action=action)


def coder() -> dict[str, Any]:
    """A CodeR run: the Manager plans, the Reproducer works (a demonstration first, one
    command answered, then it hands back), and the Manager submits on its report."""
    history = [
        said("system", "You are the Manager.", "Manager"),
        said("user", "ISSUE: sum() is wrong.", "Manager"),
        act("DISCUSSION\nPlan one.", PLAN, "Manager"),
        said("system", "You are the Reproducer.", "Reproducer"),
        said("user", "Here is a demonstration.", "Reproducer", is_demo=True),
        said("user", "ISSUE: sum() is wrong. Reproduce it.", "Reproducer"),
        act("Let me create the script.", "create reproduce.py", "Reproducer"),
        said("user", "[File: /repo/reproduce.py (1 lines total)]\n1:", "Reproducer"),
        act("Reproduced.", "succeed", "Reproducer"),
        said("user", "The Reproducer reproduced the issue.", "Manager"),
        act("DISCUSSION\nDone.", "submit", "Manager"),
    ]
    return {"environment": "swe_main", "trajectory": [], "history": history, "info": {}}


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def shape(t: Trajectory) -> list[str]:
    t.counted_steps(ApproxCounter())  # make_step accepts every step
    return [s[0].role + (f"+{len(s) - 1}" if len(s) > 1 else "") for s in t.steps]


def test_each_member_is_a_session_and_each_answered_action_a_tool_call(tmp_path: Path) -> None:
    manager, reproducer = load_file(write(tmp_path / "repo__x-1.traj", coder()))
    assert (manager.id, reproducer.id) == ("repo__x-1/Manager", "repo__x-1/Reproducer")
    assert manager.system is not None and manager.system.content == "You are the Manager."
    # the plan is answered by the report the Manager gets back; the submit by nothing
    assert shape(manager) == ["user", "assistant+1", "assistant"]
    head, report = manager.steps[1]
    assert isinstance(head, AssistantMessage) and head.content == "DISCUSSION\nPlan one."
    [plan] = head.tool_calls
    assert (plan.name, plan.parsed_arguments()) == ("bash", {"command": PLAN})
    assert report == ToolMessage("The Reproducer reproduced the issue.", plan.id, name="bash")
    assert manager.steps[2] == (AssistantMessage("DISCUSSION\nDone.\n\n```\nsubmit\n```"),)
    # the demonstration stays a user message of the Reproducer's own session
    assert shape(reproducer) == ["user", "user", "assistant+1", "assistant"]
    assert reproducer.steps[0] == (UserMessage("Here is a demonstration."),)
    assert reproducer.meta["agent"] == "Reproducer" and reproducer.meta["format"] == "swe-agent"


def test_the_action_s_block_leaves_the_text_and_other_blocks_stay(tmp_path: Path) -> None:
    content = "Look at this:\n```python\nx = 1\n```\nNow run it.\n```\npython x.py\n```"
    history = [
        said("system", "You are a programmer."),
        said("user", "Fix x."),
        said("assistant", content, action="python x.py\n"),
        said("user", "1"),
    ]
    [t] = load_file(write(tmp_path / "one.traj", {"history": history, "trajectory": []}))
    assert t.id == "one"  # no team member named: the file's name
    head = t.steps[1][0]
    assert isinstance(head, AssistantMessage)
    assert head.content == "Look at this:\n```python\nx = 1\n```\nNow run it."
    assert head.tool_calls[0].parsed_arguments() == {"command": "python x.py"}


def test_without_an_action_field_the_only_fenced_block_is_the_action(tmp_path: Path) -> None:
    history = [
        said("user", "Fix x."),
        said("assistant", "Open it.\n```\nopen x.py\n```"),
        said("user", "[File: x.py]"),
        said("assistant", "Two:\n```\nls\n```\n```\npwd\n```"),
        said("user", "Your output had two commands."),
    ]
    [t] = load_file(write(tmp_path / "two.traj", {"history": history, "trajectory": []}))
    assert t.system is None
    assert shape(t) == ["user", "assistant+1", "assistant", "user"]  # two blocks: no action


def test_a_second_system_message_starts_a_new_session_of_that_member(tmp_path: Path) -> None:
    history = [
        said("system", "You are the Programmer.", "Programmer"),
        said("user", "Task one.", "Programmer"),
        act("Edit.", "edit 1:1", "Programmer"),
        said("user", "Edited.", "Programmer"),
        said("system", "You are the Programmer, again.", "Programmer"),
        said("user", "Task two.", "Programmer"),
        act("Done.", "succeed", "Programmer"),
    ]
    data = {"history": history, "trajectory": []}
    first, second = load_file(write(tmp_path / "r.traj", data))
    assert (first.id, second.id) == ("r/Programmer", "r/Programmer-2")
    assert second.system is not None and second.system.content == "You are the Programmer, again."
    assert shape(first) == ["user", "assistant+1"] and shape(second) == ["user", "assistant"]


@pytest.mark.parametrize(
    ("lists", "outcome"),
    [
        ({"resolved": ["repo__x-1"], "applied": ["repo__x-1"]}, 1.0),
        ({"applied": ["repo__x-1"]}, 0.0),
        ({"applied": []}, None),
    ],
)
def test_outcome_from_results_json_in_the_parent_folder(
    tmp_path: Path, lists: dict[str, list[str]], outcome: float | None
) -> None:
    path = write(tmp_path / "trajs" / "repo__x-1.traj", coder())
    write(tmp_path / "results.json", lists)
    found = list(iter_trajectories([tmp_path]))  # results.json is no trajectory
    assert [t.outcome for t in found if isinstance(t, Trajectory)] == [outcome, outcome]
    assert len(found) == 2
    assert load_file(path)[0].meta["results"].endswith("results.json")


def test_detection_and_errors_name_the_file(tmp_path: Path) -> None:
    named = write(tmp_path / "named.data", coder())  # told apart by content, not the name
    found = claiming(Probe(named, explicit=True))
    assert found is not None and found.name == "swe-agent"
    named.unlink()
    broken = write(tmp_path / "broken.traj", {"history": {"role": "user"}, "trajectory": []})
    member = {"role": "user", "content": "x", "agent": 3}
    bad_agent = write(tmp_path / "agent.traj", {"history": [member], "trajectory": []})
    unparsed = write(tmp_path / "cut.traj", '{"history": [')
    items = list(iter_trajectories([tmp_path]))
    errors = {Path(e.path).name: e for e in items if isinstance(e, ImportFormatError)}
    assert set(errors) == {"broken.traj", "agent.traj", "cut.traj"}
    assert errors["broken.traj"].position == "history"
    assert errors["agent.traj"].position == "history[0].agent"
    assert "invalid JSON" in errors["cut.traj"].problem
    assert broken.exists() and bad_agent.exists() and unparsed.exists()


def test_contextfold_replay_reads_a_folder_of_traj_files(tmp_path: Path) -> None:
    write(tmp_path / "runs" / "repo__x-1.traj", coder())
    out = tmp_path / "out.json"
    args = ["replay", str(tmp_path / "runs"), "-s", "full", "-s", "clip", "--json", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["full"]["trajectories"] == 2
    assert [r["id"] for r in data["full"]["rows"]] == ["repo__x-1/Manager", "repo__x-1/Reproducer"]
