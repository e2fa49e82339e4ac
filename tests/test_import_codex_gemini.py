"""The Codex CLI and Gemini CLI importers on small hand-made logs: usage per response, reasoning
and thoughts kept as serve keeps them, compactions and rewinds, older layouts, and every line
they cannot read named, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from contextfold.core.billing import BilledUsage
from contextfold.core.errors import ImportFormatError
from contextfold.core.messages import AssistantMessage
from contextfold.importers import Trajectory, iter_trajectories
from tests.test_import_robustness import FUZZ, _check, _json, _mutate
from tests.test_importers import errors, ok, shape


def _lines(path: Path, records: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{json.dumps(r)}\n" for r in records))
    return path


# --- Codex CLI ----------------------------------------------------------------------------------


def _env(kind: str, payload: dict[str, Any], second: int = 0) -> dict[str, Any]:
    return {"timestamp": f"2026-01-02T03:04:{second:02d}.000Z", "type": kind, "payload": payload}


def _msg(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def _counts(prompt: int, cached: int, output: int) -> dict[str, Any]:
    usage = {"input_tokens": prompt, "cached_input_tokens": cached, "output_tokens": output}
    return {"type": "token_count", "info": {"last_token_usage": usage}}


def _rollout() -> list[dict[str, Any]]:
    meta = {"id": "r-1", "cli_version": "0.60.0", "cwd": "/w", "instructions": "You are Codex."}
    reasoning = {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Look."}],
                 "encrypted_content": "gAAAA" * 40}  # fmt: skip
    call = {"type": "function_call", "name": "shell", "call_id": "c1",
            "arguments": json.dumps({"command": ["ls"]})}  # fmt: skip
    return [
        _env("session_meta", meta),
        _env("turn_context", {"model": "gpt-5-codex", "cwd": "/w"}),
        _env("response_item", _msg("user", "List the files.")),
        _env("response_item", reasoning, 1),
        _env("response_item", call, 1),
        _env("event_msg", _counts(5000, 0, 80)),
        _env("event_msg", _counts(5000, 0, 80)),  # Codex repeats a count now and then
        _env("response_item", {"type": "ghost_snapshot", "ghost_commit": {"id": "abc"}}),
        _env("response_item", {"type": "function_call_output", "call_id": "c1", "output": "a.py"}),
        _env("response_item", _msg("assistant", "One file: a.py."), 2),
        _env("event_msg", _counts(5200, 4992, 9)),
    ]


def test_a_rollout_reads_with_each_responses_usage(tmp_path: Path) -> None:
    [t] = list(iter_trajectories([_lines(tmp_path / "rollout-1.jsonl", _rollout())]))
    assert isinstance(t, Trajectory) and t.id == "r-1" and t.model == "gpt-5-codex"
    assert shape(t) == ["user", "assistant+1", "assistant"]
    assert t.system is not None and t.system.content == "You are Codex."
    first, second = t.calls
    assert first.usage == BilledUsage(5000, 0, 0, 0, 80)
    assert second.usage == BilledUsage(208, 4992, 0, 0, 9)
    reply = t.steps[1][0]
    assert isinstance(reply, AssistantMessage) and reply.tool_calls[0].name == "shell"
    assert reply.parts[0].text == "Look." and reply.parts[0].tokens > 0  # the reasoning, kept


def test_a_compaction_starts_a_segment_from_the_history_kept(tmp_path: Path) -> None:
    kept = [_msg("user", "List the files."), _msg("user", "Summary: a.py is the only file.")]
    records = [*_rollout(), _env("compacted", {"message": "", "replacement_history": kept}),
               _env("response_item", _msg("assistant", "Done."), 9), _env("event_msg",
               _counts(300, 0, 2))]  # fmt: skip
    first, second = ok(list(iter_trajectories([_lines(tmp_path / "rollout-1.jsonl", records)])))
    assert len(first.calls) == 2 and second.id == "r-1#2"
    assert shape(second) == ["user", "user", "assistant"]
    assert [c.usage for c in second.calls] == [BilledUsage(300, 0, 0, 0, 2)]


def test_a_broken_rollout_line_is_named_and_the_rest_read(tmp_path: Path) -> None:
    path = _lines(tmp_path / "rollout-1.jsonl", _rollout())
    path.write_text(path.read_text() + '{"timestamp": "2026-01-02T03:05:00Z", "type": "resp')
    items = list(iter_trajectories([path]))
    [error] = errors(items)
    assert error.position == "line 12" and "broken line" in error.problem
    assert len(ok(items)) == 1


def test_a_malformed_item_names_its_line(tmp_path: Path) -> None:
    records = _rollout()
    records[4]["payload"].pop("call_id")
    [error] = list(iter_trajectories([_lines(tmp_path / "rollout-1.jsonl", records)]))
    assert isinstance(error, ImportFormatError) and error.position == "line 5, call_id"


# --- Gemini CLI ---------------------------------------------------------------------------------


def _gemini(text: str, ident: str, **extra: Any) -> dict[str, Any]:
    tokens = {"input": 900, "output": 12, "cached": 800, "thoughts": 5, "tool": 0, "total": 917}
    return {"id": ident, "timestamp": "2026-01-02T03:04:05.000Z", "type": "gemini",
            "content": text, "tokens": tokens, "model": "gemini-2.5-pro", **extra}  # fmt: skip


def _user(text: str, ident: str) -> dict[str, Any]:
    return {"id": ident, "timestamp": "2026-01-02T03:04:00.000Z", "type": "user",
            "content": [{"text": text}]}  # fmt: skip


def _chat() -> list[dict[str, Any]]:
    call = {"id": "read_1", "name": "read_file", "args": {"path": "a.py"}, "status": "success",
            "result": [{"functionResponse": {"id": "read_1", "name": "read_file",
                                             "response": {"output": "x = 1"}}}]}  # fmt: skip
    thought = {"subject": "Reading", "description": "Open a.py first."}
    return [
        {"sessionId": "g-1", "projectHash": "ab", "startTime": "2026-01-02T03:04:00Z"},
        _user("What is in a.py?", "u1"),
        _gemini("", "m1", thoughts=[thought], toolCalls=[call]),
        {"$set": {"lastUpdated": "2026-01-02T03:04:06Z"}},
        {"id": "i1", "type": "info", "content": "Tool approved."},
        _gemini("It sets x to 1.", "m2"),
    ]


def test_a_saved_chat_reads_with_thoughts_and_usage(tmp_path: Path) -> None:
    path = _lines(tmp_path / "chats" / "session-1.jsonl", _chat())
    [t] = list(iter_trajectories([path]))
    assert isinstance(t, Trajectory) and t.id == "g-1" and t.model == "gemini-2.5-pro"
    assert shape(t) == ["user", "assistant+1", "assistant"]
    call = t.steps[1][0]
    assert isinstance(call, AssistantMessage) and call.tool_calls[0].name == "read_file"
    assert "**Reading** Open a.py first." in call.parts[0].text  # a thought part, counted
    assert t.steps[1][1].content == "x = 1"
    assert [c.usage for c in t.calls] == [BilledUsage(100, 800, 0, 0, 17)] * 2


def test_a_rewind_drops_what_came_after_it(tmp_path: Path) -> None:
    records = [*_chat(), {"$rewindTo": "m2"}, _gemini("x is 1.", "m3")]
    [t] = list(iter_trajectories([_lines(tmp_path / "session-1.jsonl", records)]))
    assert isinstance(t, Trajectory) and t.steps[-1][0].content == "x is 1."
    assert len(t.calls) == 2


def test_an_older_whole_record_chat_reads_the_same(tmp_path: Path) -> None:
    header, *messages = [r for r in _chat() if "$set" not in r]
    path = tmp_path / "session-1.json"
    path.write_text(json.dumps({**header, "messages": messages}, indent=2))
    [t] = list(iter_trajectories([tmp_path]))
    assert isinstance(t, Trajectory) and shape(t) == ["user", "assistant+1", "assistant"]


def test_a_broken_chat_line_is_named_and_the_rest_read(tmp_path: Path) -> None:
    path = _lines(tmp_path / "session-1.jsonl", _chat())
    path.write_text(path.read_text() + '{"id": "m9", "type": "gem')
    items = list(iter_trajectories([path]))
    assert [e.position for e in errors(items)] == ["line 7"]
    assert len(ok(items)) == 1


# --- fuzzing: a damaged or newer log gives an item per problem, never a traceback -------------

_LOGS = {"rollout-1.jsonl": _rollout(), "session-1.jsonl": _chat()}


@FUZZ
@given(
    name=st.sampled_from(sorted(_LOGS)),
    line=st.integers(0, 10),
    path=st.lists(st.integers(0, 9) | st.sampled_from(["payload", "content", "toolCalls"]),
                  max_size=5),
    value=_json,
)  # fmt: skip
def test_mutated_logs_never_raise(
    tmp_path: Path, name: str, line: int, path: list[Any], value: Any
) -> None:
    records = _LOGS[name]
    k = line % len(records)
    changed = [_mutate(r, path, value) if i == k else r for i, r in enumerate(records)]
    _check(tmp_path, name, "".join(f"{json.dumps(r)}\n" for r in changed))


@FUZZ
@given(name=st.sampled_from(sorted(_LOGS)), cut=st.integers(0, 5_000), junk=st.binary(max_size=9))
def test_cut_logs_never_raise(tmp_path: Path, name: str, cut: int, junk: bytes) -> None:
    text = "".join(f"{json.dumps(r)}\n" for r in _LOGS[name]).encode()
    _check(tmp_path, name, text[: cut % (len(text) + 1)] + junk)
