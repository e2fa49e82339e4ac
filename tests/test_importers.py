"""Importers: each native format to steps, detection, error positions, batch behaviour."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contextfold.core.errors import ImportFormatError
from contextfold.core.messages import AssistantMessage, ToolMessage, UserMessage
from contextfold.core.tokens import ApproxCounter
from contextfold.importers import Trajectory, iter_trajectories, load_file

TAU2_SYSTEM = (
    "<instructions>\nYou are a customer service agent that helps the user according to the "
    "<policy> provided below.\nIn each turn you can either:\n- Send a message to the user.\n"
    "- Make a tool call.\nYou cannot do both at the same time.\n\nTry to be helpful and always "
    "follow the policy. Always make sure you generate valid JSON only.\n</instructions>\n"
    "<policy>\nBe nice.\n</policy>"
)


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def shape(t: Trajectory) -> list[str]:
    """Each step as 'role' or 'assistant+N' (N tool results); also checks make_step accepts it."""
    t.counted_steps(ApproxCounter())
    return [s[0].role + (f"+{len(s) - 1}" if len(s) > 1 else "") for s in t.steps]


def ok(items: list[Trajectory | ImportFormatError]) -> list[Trajectory]:
    return [i for i in items if isinstance(i, Trajectory)]


def errors(items: list[Trajectory | ImportFormatError]) -> list[ImportFormatError]:
    return [i for i in items if isinstance(i, ImportFormatError)]


# --- tau2 -------------------------------------------------------------------------------------


def call(cid: str, name: str, args: dict[str, Any], requestor: str = "assistant") -> dict[str, Any]:
    return {"id": cid, "name": name, "arguments": args, "requestor": requestor}


def msg(role: str, content: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": content, **extra}


def result(cid: str, content: str | None, requestor: str = "assistant") -> dict[str, Any]:
    return {"role": "tool", "id": cid, "content": content, "requestor": requestor, "error": False}


def tau2_file(sims: list[list[dict[str, Any]]], *, agent: str = "llm_agent") -> dict[str, Any]:
    return {
        "timestamp": "2025-01-01",
        "info": {
            "environment_info": {"domain_name": "airline", "policy": "Be nice."},
            "agent_info": {"implementation": agent, "llm": "m"},
        },
        "tasks": [{"id": f"t{i}", "ticket": f"ticket {i}"} for i in range(len(sims))],
        "simulations": [
            {
                "id": f"s{i}",
                "task_id": f"t{i}",
                "trial": 0,
                "termination_reason": "user_stop",
                "reward_info": {"reward": 1.0},
                "messages": m,
            }
            for i, m in enumerate(sims)
        ],
    }


GOOD_SIM = [
    msg("assistant", "Hi! How can I help you today?"),
    msg("user", "Book a flight."),
    msg("assistant", "", tool_calls=[call("a", "find", {"to": "SEA"}), call("b", "user", {})]),
    result("b", None),
    result("a", "found"),
    msg("assistant", "Done."),
    msg("user", "Thanks."),
]


def test_tau2_simulation_to_steps(tmp_path: Path) -> None:
    path = write(tmp_path / "run.json", tau2_file([GOOD_SIM]))
    [t] = load_file(path)
    assert t.id == "airline:t0:trial0@run" and t.outcome == 1.0 and t.source == str(path)
    assert t.system is not None and t.system.content == TAU2_SYSTEM
    assert shape(t) == ["assistant", "user", "assistant+2", "assistant", "user"]
    head, *results = t.steps[2]
    assert isinstance(head, AssistantMessage) and head.content is None
    assert [(c.id, c.name, json.loads(c.arguments)) for c in head.tool_calls] == [
        ("a", "find", {"to": "SEA"}),
        ("b", "user", {}),
    ]
    assert results == [ToolMessage("", "b", name="user"), ToolMessage("found", "a", name="find")]
    assert t.meta["domain"] == "airline" and t.meta["task_id"] == "t0" and t.meta["trial"] == 0
    assert t.meta["termination_reason"] == "user_stop" and t.meta["file"] == "run.json"


def test_tau2_drops_the_user_simulators_tool_traffic(tmp_path: Path) -> None:
    sim = [
        msg("assistant", "Please toggle airplane mode."),
        msg("user", None, tool_calls=[call("u1", "toggle_airplane_mode", {}, "user")]),
        result("u1", "Airplane mode off", "user"),
        msg("user", "Done, what now?", tool_calls=[call("u2", "check_status", {}, "user")]),
        result("u2", "No service", "user"),
        msg("assistant", "", tool_calls=[call("c1", "get_line", {"id": "L1"})]),
        result("c1", "active"),
    ]
    [t] = load_file(write(tmp_path / "telecom.json", tau2_file([sim])))
    assert shape(t) == ["assistant", "user", "assistant+1"]
    assert t.steps[1] == (UserMessage("Done, what now?"),)
    assert t.meta["user_tool_messages_dropped"] == 3


def test_tau2_solo_agent_gets_its_ticket(tmp_path: Path) -> None:
    sim = [msg("assistant", "", tool_calls=[call("c1", "get_line", {})]), result("c1", "x")]
    [t] = load_file(write(tmp_path / "solo.json", tau2_file([sim], agent="llm_agent_solo")))
    assert t.system is not None
    assert t.system.content.endswith("</policy>\n<ticket>\nticket 0\n</ticket>")
    assert "only make tool calls" in t.system.content


def test_tau2_trailing_unanswered_call_is_dropped(tmp_path: Path) -> None:
    sim = [msg("user", "hi"), msg("assistant", "Let me check.", tool_calls=[call("c", "f", {})])]
    [t] = load_file(write(tmp_path / "r.json", tau2_file([sim])))
    assert t.steps[-1] == (AssistantMessage("Let me check."),)
    assert t.meta["unanswered_calls_dropped"] == 1


def test_tau2_unanswered_call_mid_run_is_an_error(tmp_path: Path) -> None:
    asks = msg("assistant", "", tool_calls=[call("c", "f", {})])
    sim = [msg("user", "hi"), asks, msg("user", "?")]
    path = write(tmp_path / "r.json", tau2_file([sim]))
    with pytest.raises(ImportFormatError) as info:
        load_file(path)
    assert info.value.path == str(path) and info.value.position == "simulations[0].messages[1]"


def test_malformed_trajectory_names_file_and_position(tmp_path: Path) -> None:
    bad = [msg("user", "hi"), msg("assistant", "ok"), msg("narrator", "meanwhile...")]
    path = write(tmp_path / "r.json", tau2_file([GOOD_SIM, bad, GOOD_SIM]))
    with pytest.raises(ImportFormatError, match=r"r\.json: simulations\[1\]\.messages\[2\]: "):
        load_file(path)
    items = list(iter_trajectories([path]))  # the batch skips it and goes on
    assert [type(i).__name__ for i in items] == ["Trajectory", "ImportFormatError", "Trajectory"]
    assert [t.id for t in ok(items)] == ["airline:t0:trial0@r", "airline:t2:trial0@r"]


# --- tau-bench --------------------------------------------------------------------------------


def test_tau_bench_trajectories(tmp_path: Path) -> None:
    traj = [
        {"role": "system", "content": "policy"},
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "get", "content": "{}"},
        {"role": "assistant", "content": "Here you go."},
    ]
    data = [
        {"task_id": 3, "trial": 1, "reward": 0.0, "info": {}, "traj": traj},
        {"task_id": 4, "reward": 1.0, "info": {}, "traj": traj},
    ]
    first, second = load_file(write(tmp_path / "hist.json", data))
    assert first.id == "tau-bench:3:trial1" and first.outcome == 0.0
    assert second.id == "tau-bench:4:trial0" and second.outcome == 1.0
    assert first.system is not None and first.system.content == "policy"
    assert shape(first) == ["user", "assistant+1", "assistant"]
    assert first.steps[1][1] == ToolMessage("{}", "c1", name="get")


# --- mini-swe-agent ---------------------------------------------------------------------------

FORMAT_ERROR = "Please always provide EXACTLY ONE action in triple backticks, found 2 actions."


def miniswe(instance: str = "repo__x-1") -> dict[str, Any]:
    one = "THOUGHT: look\n\n```bash\nls -la\n```"
    two = "Two:\n```bash\nls\n```\nand\n```bash\npwd\n```"
    submit = "Done.\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff\n```"
    messages = [
        ("system", "You are a helpful assistant."),
        ("user", "<pr_description>fix</pr_description>"),
        ("assistant", one),
        ("user", "<returncode>0</returncode>\n<output>a.py</output>"),
        ("assistant", two),
        ("user", FORMAT_ERROR),
        ("assistant", submit),
        ("user", "diff --git a/a.py b/a.py"),
    ]
    return {
        "info": {"exit_status": "Submitted", "config": {"model": {"model_name": "m1"}}},
        "messages": [{"role": r, "content": c, "extra": {}} for r, c in messages],
        "trajectory_format": "mini-swe-agent-1",
        "instance_id": instance,
    }


def test_miniswe_bash_blocks_become_tool_calls(tmp_path: Path) -> None:
    [t] = load_file(write(tmp_path / "x.traj.json", miniswe()))
    assert t.id == "repo__x-1" and t.outcome is None
    assert t.system is not None and t.system.content == "You are a helpful assistant."
    assert shape(t) == ["user", "assistant+1", "assistant", "user", "assistant+1"]
    head, output = t.steps[1]
    assert isinstance(head, AssistantMessage)
    assert head.content == "THOUGHT: look"  # the block moved into the tool call
    [bash] = head.tool_calls
    assert (bash.id, bash.name) == ("bash-1", "bash")
    assert bash.parsed_arguments() == {"command": "ls -la"}
    assert output == ToolMessage(
        "<returncode>0</returncode>\n<output>a.py</output>", "bash-1", name="bash"
    )
    assert t.steps[2][0] == AssistantMessage(miniswe()["messages"][4]["content"])  # two blocks
    assert t.steps[3] == (UserMessage(FORMAT_ERROR),)
    assert t.steps[4][1] == ToolMessage("diff --git a/a.py b/a.py", "bash-4", name="bash")
    assert t.meta["exit_status"] == "Submitted" and t.meta["model"] == "m1"


@pytest.mark.parametrize("resolved", [True, False])
def test_miniswe_outcome_from_sibling_report(tmp_path: Path, resolved: bool) -> None:
    path = write(tmp_path / "x" / "x.traj.json", miniswe())
    write(tmp_path / "x" / "report.json", {"resolved": resolved})
    [t] = load_file(path)
    assert t.outcome == (1.0 if resolved else 0.0)


def test_miniswe_outcome_from_logs_folder(tmp_path: Path) -> None:
    path = write(tmp_path / "trajs" / "repo__x-1" / "repo__x-1.traj.json", miniswe())
    write(tmp_path / "logs" / "repo__x-1" / "report.json", {"resolved": True, "patch_exists": True})
    write(tmp_path / "logs" / "other" / "report.json", {"resolved": False})
    items = list(iter_trajectories([tmp_path]))  # report.json files are not trajectories
    assert [(t.id, t.outcome) for t in ok(items)] == [("repo__x-1", 1.0)] and not errors(items)
    assert load_file(path)[0].meta["report"].endswith("logs/repo__x-1/report.json")


# --- JSONL ------------------------------------------------------------------------------------


def test_jsonl_lines_and_a_malformed_line(tmp_path: Path) -> None:
    chat = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]
    lines = [
        json.dumps(chat),
        "",
        '{"messages": [{"role": "user"',
        json.dumps({"id": "custom", "outcome": 0.5, "messages": chat[1:]}),
    ]
    path = write(tmp_path / "chats.jsonl", "\n".join(lines) + "\n")
    items = list(iter_trajectories([path]))
    assert [(t.id, t.outcome) for t in ok(items)] == [("chats:1", None), ("custom", 0.5)]
    assert ok(items)[0].system is not None and shape(ok(items)[0]) == ["user", "assistant"]
    [err] = errors(items)
    assert err.path == str(path) and err.position.startswith("line 3")
    with pytest.raises(ImportFormatError, match="line 3"):
        load_file(path)


def test_jsonl_bad_message_names_the_line_and_message(tmp_path: Path) -> None:
    path = write(tmp_path / "c.jsonl", json.dumps([{"role": "user", "content": "a"}, {"x": 1}]))
    with pytest.raises(ImportFormatError) as info:
        load_file(path)
    assert info.value.position == "line 1, messages[1].role"


# --- discovery and detection ------------------------------------------------------------------


def test_folder_recursion_order_and_skipping(tmp_path: Path) -> None:
    write(tmp_path / "b" / "deep" / "run.json", tau2_file([GOOD_SIM]))
    write(tmp_path / "a" / "broken.traj.json", '{"messages": [')
    write(tmp_path / "a" / "c.jsonl", json.dumps([{"role": "user", "content": "hi"}]))
    write(tmp_path / "a" / "config.json", {"model": "x"})
    write(tmp_path / "a" / "notes.json", "not json at all")
    write(tmp_path / "readme.md", "# hi")
    items = list(iter_trajectories([str(tmp_path)]))
    [err] = errors(items)
    assert err.path.endswith("broken.traj.json") and err.position == "line 1, column 15"
    assert [t.id for t in ok(items)] == ["c:1", "airline:t0:trial0@run"]
    assert [str(i) for i in items] == [str(i) for i in iter_trajectories([tmp_path])]


def test_explicit_paths_that_are_no_trajectory_are_errors(tmp_path: Path) -> None:
    unrelated = write(tmp_path / "config.json", {"model": "x"})
    items = list(iter_trajectories([unrelated, tmp_path / "missing.json"]))
    assert [e.path for e in errors(items)] == [str(unrelated), str(tmp_path / "missing.json")]
    with pytest.raises(ImportFormatError, match="matches no trajectory format"):
        load_file(unrelated)


def test_format_is_detected_by_content(tmp_path: Path) -> None:
    [t] = load_file(write(tmp_path / "results.data", tau2_file([GOOD_SIM])))
    assert t.id == "airline:t0:trial0@results"
    chat = json.dumps([{"role": "user", "content": "hi"}])
    [a, b] = load_file(write(tmp_path / "lines.json", f"{chat}\n{chat}\n"))
    assert (a.id, b.id) == ("lines:1", "lines:2")


def test_a_file_reached_twice_is_read_once(tmp_path: Path) -> None:
    path = write(tmp_path / "run.json", tau2_file([GOOD_SIM]))
    assert len(list(iter_trajectories([path, tmp_path]))) == 1
