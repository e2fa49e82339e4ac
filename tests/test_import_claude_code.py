"""The Claude Code importer on small hand-made logs: replies merged by message id, calls and
their results wherever their lines are, sidechains and subagents as sessions of their own,
compactions as new segments, retried replies left behind, and every line it cannot read named
(file, line, what) or skipped and counted, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from contextfold.cli import app
from contextfold.core.billing import BilledUsage
from contextfold.core.errors import ImportFormatError
from contextfold.core.messages import AssistantMessage, ToolMessage, UserMessage
from contextfold.core.wire.layout import layout_of
from contextfold.importers import Trajectory, iter_trajectories
from tests._claude_logs import Log, call, text, thinking, usage
from tests.test_import_robustness import FUZZ, _check, _json, _mutate
from tests.test_importers import errors, ok, shape

_keys = st.integers(0, 9) | st.sampled_from(["message", "content", "usage", "parentUuid", "type"])


def _read(path: Path) -> list[Trajectory | ImportFormatError]:
    return list(iter_trajectories([path]))


def _session(log: Log | None = None) -> Log:
    """A prompt, a reply (thinking, text, a call) logged a block a line, its result, an answer."""
    log = log or Log()
    log.raw({"type": "file-history-snapshot", "messageId": "m0", "snapshot": {}})
    log.user("Fix the bug.")
    log.block("m1", thinking("Look first."), use=usage(written=900))
    log.block("m1", text("Listing."), use=usage(written=900))
    log.block("m1", call("c1"), use=usage(written=900, output=40), stop="tool_use")
    log.result("c1", "a.py")
    log.block("m2", text("Done."), use=usage(read=900, written=50, output=7), stop="end_turn")
    return log


def test_a_reply_logged_a_block_a_line_is_one_message_with_its_call(tmp_path: Path) -> None:
    [t] = _read(_session().write(tmp_path / "s.jsonl"))
    assert isinstance(t, Trajectory) and shape(t) == ["user", "assistant+1", "assistant"]
    reply = t.steps[1][0]
    assert isinstance(reply, AssistantMessage) and reply.content == "Listing."
    assert [c.id for c in reply.tool_calls] == ["c1"]
    layout = layout_of(reply, "anthropic")
    assert layout is not None and layout["t"][0]["$raw"]["signature"] == "sig-11"
    assert t.meta["lines"] == {"file-history-snapshot": 1, "user": 2, "assistant": 4}
    assert t.id == "s-1" and t.model == "claude-sonnet-4-5-20250929" and t.system is None


def test_each_call_carries_the_usage_its_reply_was_billed(tmp_path: Path) -> None:
    [t] = _read(_session().write(tmp_path / "s.jsonl"))
    assert isinstance(t, Trajectory)
    first, second = t.calls
    assert first.usage == BilledUsage(3, 0, 900, 0, 40) and first.output_final
    assert second.usage == BilledUsage(3, 900, 50, 0, 7)
    assert second.at is not None and first.at is not None and second.at > first.at


def test_a_streamed_reply_without_its_stop_reason_keeps_a_lower_bound(tmp_path: Path) -> None:
    log = Log()
    log.user("Go.")
    log.block("m1", text("One."), use=usage(output=1, hour=64))
    log.block("m1", call("c1"), use=usage(output=12, hour=64))
    log.result("c1")
    [t] = _read(log.write(tmp_path / "s.jsonl"))
    assert isinstance(t, Trajectory)
    [recorded] = t.calls
    assert recorded.usage == BilledUsage(3, 0, 0, 64, 12) and not recorded.output_final


def test_parallel_results_off_the_path_and_blocks_after_a_result_are_merged(
    tmp_path: Path,
) -> None:
    log = Log()
    log.user("Go.")
    first = log.block("m1", call("c1"))
    second = log.block("m1", call("c2"))
    log.result("c1", "one", parent=first)  # hangs off the path (a fork), as Claude Code logs it
    log.result("c2", "two", parent=second)
    log.block("m2", call("c3"))  # streaming tool execution: a block after a result
    log.result("c3", "three")
    log.block("m2", call("c4"))
    log.result("c4", "four")
    log.block("m3", text("Done."), stop="end_turn")
    [t] = _read(log.write(tmp_path / "s.jsonl"))
    assert isinstance(t, Trajectory)
    assert shape(t) == ["user", "assistant+2", "assistant+2", "assistant"]
    assert [m.content for m in t.steps[1][1:]] == ["one", "two"]
    assert len(t.calls) == 3


def test_a_retried_reply_is_left_behind_and_its_call_counted(tmp_path: Path) -> None:
    log = Log()
    prompt = log.user("Go.")
    log.block("dead", thinking("Hmm."), use=usage(written=500))
    log.block("dead", call("lost"), use=usage(written=500))
    log.result("lost", "Streaming fallback triggered", parent=prompt, is_error=True)
    log.block("m1", text("Again."), use=usage(read=500, output=9), stop="end_turn")
    [t] = _read(log.write(tmp_path / "s.jsonl"))
    assert isinstance(t, Trajectory) and shape(t) == ["user", "assistant"]
    [left] = t.meta["off_path_calls"]
    assert left.usage == BilledUsage(3, 0, 500, 0, 1)
    assert t.meta["orphan_results"] == 1


def test_a_broken_line_and_a_truncated_last_line_are_skipped_and_counted(tmp_path: Path) -> None:
    log = _session()
    log.lines.insert(3, 'sistant","uuid":"x","timestamp":"2025-12-12T03:01:53.464Z"}')
    log.lines.append('{"parentUuid":"u6","type":"assistant","message":{"content":[{"ty')
    path = log.write(tmp_path / "s.jsonl")
    items = _read(path)
    assert [e.position for e in errors(items)] == ["line 4", "line 9"]
    assert all("broken line" in e.problem and e.path == str(path) for e in errors(items))
    [t] = ok(items)
    assert shape(t) == ["user", "assistant+1", "assistant"]
    assert t.meta["lines"]["broken"] == 2


def test_an_unknown_line_with_a_message_is_named_and_one_without_is_counted(
    tmp_path: Path,
) -> None:
    log = _session()
    log.raw({"type": "hologram", "sessionId": "s-1", "message": {"role": "user", "content": "?"}})
    log.raw({"type": "atis-latch", "sessionId": "s-1"})
    log.raw({"type": "sparkles", "sessionId": "s-1"})
    items = _read(log.write(tmp_path / "s.jsonl"))
    [error] = errors(items)
    assert error.position == "line 8" and "'hologram' line with a message" in error.problem
    [t] = ok(items)
    assert t.meta["lines"]["sparkles"] == 1 and t.meta["lines"]["atis-latch"] == 1


def test_a_malformed_block_names_its_line(tmp_path: Path) -> None:
    log = Log()
    log.user("Go.")
    log.block("m1", {"type": "tool_use", "name": "Bash", "input": {}})  # no id
    [error] = _read(log.write(tmp_path / "s.jsonl"))
    assert isinstance(error, ImportFormatError)
    assert error.position == "line 2, content.0.id" and "needs a string id" in error.problem


def test_an_unknown_block_type_is_kept_whole_and_counted(tmp_path: Path) -> None:
    log = Log()
    log.user("Go.")
    log.block("m1", {"type": "future_block", "data": "xyz"})
    log.block("m1", text("Done."), stop="end_turn")
    [t] = _read(log.write(tmp_path / "s.jsonl"))
    assert isinstance(t, Trajectory)
    reply = t.steps[1][0]
    assert "future_block" in reply.parts[0].text and reply.content == "Done."


def test_a_sidechain_and_a_subagent_file_are_sessions_of_their_own(tmp_path: Path) -> None:
    log = _session()
    log.extra = {"isSidechain": True}
    log.user("Search the code.", parent=None)
    log.block("s1", text("Found it."), stop="end_turn")
    main, side = ok(_read(log.write(tmp_path / "s.jsonl")))
    assert (main.id, side.id) == ("s-1", "s-1/sidechain-1") and side.meta["sidechain"]
    agent = Log(extra={"isSidechain": True, "agentId": "a7"})
    agent.user("Plan the fix.", parent=None)
    agent.block("p1", text("Plan."), stop="end_turn")
    [sub] = _read(agent.write(tmp_path / "agent-a7.jsonl"))
    assert isinstance(sub, Trajectory) and sub.id == "s-1/agent-a7"
    assert sub.meta["agent_id"] == "a7" and shape(sub) == ["user", "assistant"]


@pytest.mark.parametrize("linked", [False, True])
def test_a_compaction_starts_a_new_segment_from_its_summary(tmp_path: Path, linked: bool) -> None:
    log = _session()
    before = log.last
    parent = before if linked else None  # the boundary names the line before it, or nothing
    log.add("system", parent=parent, subtype="compact_boundary", logicalParentUuid=before)
    log.user("This session is being continued. Summary: fixed a.py.", isCompactSummary=True)
    log.block("m9", text("Continuing."), stop="end_turn")
    first, second = ok(_read(log.write(tmp_path / "s.jsonl")))
    assert shape(first) == ["user", "assistant+1", "assistant"]
    assert second.id == "s-1#2" and second.meta["compacted"]
    assert shape(second) == ["user", "assistant"]
    assert isinstance(second.steps[0][0], UserMessage)
    assert second.steps[0][0].content.startswith("This session is being continued")


def test_attachments_are_parts_of_the_message_they_follow(tmp_path: Path) -> None:
    log = Log()
    log.user("Go.")
    rendered = [{"content": "<system-reminder>\nToday's date is 2026-01-02.\n</system-reminder>"}]
    log.add("attachment", attachment={"type": "date", "date": "2026-01-02"}, rendered=rendered)
    hook = {"type": "hook_success", "stdout": json.dumps({"additionalContext": "Use tabs."})}
    log.add("attachment", attachment=hook)
    log.add("attachment", attachment={"type": "session_context", "context": {}})
    log.block("m1", text("Done."), stop="end_turn")
    [t] = _read(log.write(tmp_path / "s.jsonl"))
    assert isinstance(t, Trajectory)
    prompt = t.steps[0][0]
    assert prompt.content == "Go."
    shown = [p.text for p in prompt.parts]
    assert shown == [rendered[0]["content"], "Use tabs."]  # the empty one showed nothing


def test_an_image_in_a_tool_result_is_kept_and_counted(tmp_path: Path) -> None:
    log = Log()
    log.user("Look.")
    log.block("m1", call("c1", "Read", file_path="/x.png"), stop="tool_use")
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": ""}}
    log.result("c1", [image])
    log.block("m2", text("A cat."), stop="end_turn")
    [t] = _read(log.write(tmp_path / "s.jsonl"))
    assert isinstance(t, Trajectory)
    result = t.steps[1][1]
    assert isinstance(result, ToolMessage) and "[image]" in result.parts[0].text
    assert result.parts[0].tokens > 0


def test_a_workflow_journal_is_claude_codes_and_holds_no_session(tmp_path: Path) -> None:
    journal = tmp_path / "wf" / "journal.jsonl"
    journal.parent.mkdir()
    started = {"type": "started", "key": "v2:ab", "agentId": "a1"}
    done = {"type": "result", "key": "v2:ab", "agentId": "a1", "result": {"ok": True}}
    journal.write_text(f"{json.dumps(started)}\n{json.dumps(done)}\n")
    _session().write(tmp_path / "wf" / "s.jsonl")
    items = _read(tmp_path)
    assert errors(items) == [] and len(ok(items)) == 1


def test_replay_reads_a_projects_folder_with_no_flag(tmp_path: Path) -> None:
    _session().write(tmp_path / "projects" / "-work" / "s-1.jsonl")
    result = CliRunner().invoke(app, ["replay", str(tmp_path / "projects"), "-s", "full"])
    assert result.exit_code == 0, result.output
    assert "1 trajectory" in result.output


# --- fuzzing: whatever a damaged or newer log holds, an item per problem, never a traceback ---

_LINES = [json.loads(line) for line in _session().lines]


@FUZZ
@given(line=st.integers(0, len(_LINES) - 1), path=st.lists(_keys, max_size=5), value=_json)
def test_mutated_logs_never_raise(tmp_path: Path, line: int, path: list[Any], value: Any) -> None:
    lines = [json.dumps(_mutate(d, path, value) if i == line else d) for i, d in enumerate(_LINES)]
    _check(tmp_path, "s.jsonl", "\n".join(lines) + "\n")


@FUZZ
@given(cut=st.integers(0, 5_000), junk=st.binary(max_size=20))
def test_cut_and_corrupted_logs_never_raise(tmp_path: Path, cut: int, junk: bytes) -> None:
    text = "".join(f"{json.dumps(d)}\n" for d in _LINES).encode()
    _check(tmp_path, "s.jsonl", text[: cut % (len(text) + 1)] + junk)
