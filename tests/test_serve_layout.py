"""The API edges read a request into the conversation's messages and write them back as the
client sent them (its blocks and items, the kept ones verbatim), and a message a strategy
rewrote keeps what it can: the client's own shapes, from Claude Code's and Codex's requests."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from contextfold.core.grouping import group_steps
from contextfold.core.messages import Message, SystemMessage, ToolMessage, from_openai, to_openai
from contextfold.serve.apis.anthropic._cache import Marks
from contextfold.serve.apis.anthropic._read import read_messages, read_system
from contextfold.serve.apis.anthropic._write import write_view
from contextfold.serve.apis.responses._read import read_input
from contextfold.serve.apis.responses._write import write_input
from contextfold.serve.build import upstream_spec
from tests._protocols import strip_marks

MARK = {"type": "ephemeral"}
PNG = (  # a 1x1 image
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5E"
    "rkJggg=="
)
IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
CLAUDE_SYSTEM = [
    {"type": "text", "text": "x-anthropic-billing-header: cc_version=2"},
    {"type": "text", "text": "You are a Claude agent.", "cache_control": MARK},
    {"type": "text", "text": "The long prompt.", "cache_control": MARK},
]
CLAUDE_MESSAGES: list[dict[str, Any]] = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "<system-reminder>r</system-reminder>"},
            {"type": "text", "text": "Fix it."},
        ],
    },
    {"role": "system", "content": [{"type": "text", "text": "cwd: /work"}]},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Read first.", "signature": "c2ln"},
            {"type": "redacted_thinking", "data": "ZW5j"},
            {"type": "text", "text": "Reading.", "citations": None},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "Read",
                "input": {"file_path": "/work/a.py"},
            },
            {
                "type": "tool_use",
                "id": "toolu_2",
                "name": "Read",
                "input": {"file_path": "/work/b.png"},
            },
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_2",
                "content": [{"type": "text", "text": "b.png"}, IMAGE],
            },
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": "def f(): pass",
                "is_error": False,
            },
            {"type": "text", "text": "Go on.", "cache_control": MARK},
        ],
    },
    {
        "role": "assistant",
        "content": [
            {
                "type": "server_tool_use",
                "id": "srvtoolu_1",
                "name": "web_search",
                "input": {"query": "f"},
            },
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
            {"type": "text", "text": "Done."},
        ],
    },
    {"role": "user", "content": [IMAGE]},
]
CODEX_INPUT: list[dict[str, Any]] = [
    {
        "type": "message",
        "role": "developer",
        "content": [{"type": "input_text", "text": "<prompt>"}],
    },
    {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "<environment_context>"}],
    },
    {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "Write greet.py"}],
    },
    {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "plan"}],
        "encrypted_content": "gAAAA",
    },
    {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "exec_command",
        "arguments": '{"cmd":"ls"}',
        "status": "completed",
    },
    {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"},
    {
        "type": "custom_tool_call",
        "id": "ctc_1",
        "status": "completed",
        "call_id": "call_2",
        "name": "apply_patch",
        "input": "*** Begin Patch",
    },
    {"type": "custom_tool_call_output", "id": "ctco_1", "call_id": "call_2", "output": "Success."},
    {
        "type": "local_shell_call",
        "id": "ls_1",
        "call_id": "call_3",
        "status": "completed",
        "action": {"type": "exec", "command": ["pwd"]},
    },
    {"type": "local_shell_call_output", "call_id": "call_3", "output": "/work"},
    {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
    },
    {"role": "user", "content": "thanks"},
]


def _anthropic(system: Any, messages: Any) -> tuple[list[Message], Marks]:
    marks = Marks()
    grouped = group_steps(read_messages(messages, marks), system=read_system(system, marks))
    flat = [grouped.system] if grouped.system else []
    marks.locate(grouped.steps)
    return [*flat, *(m for step in grouped.steps for m in step)], marks


def test_claude_codes_request_is_written_back_as_it_came() -> None:
    messages, marks = _anthropic(CLAUDE_SYSTEM, CLAUDE_MESSAGES)
    stored = [from_openai(to_openai(m)) for m in messages]  # what the store gives back
    written = write_view(stored)
    assert written.system == strip_marks(CLAUDE_SYSTEM)
    assert written.messages == strip_marks(CLAUDE_MESSAGES)
    assert marks.system == [(1, MARK), (2, MARK)]
    assert list(marks.steps.values()) == [[(0, MARK)]]  # the newest user text's block


def test_responses_input_is_written_back_as_it_came() -> None:
    labeled = read_input(CODEX_INPUT)
    grouped = group_steps(labeled, system=SystemMessage("instructions"))
    messages = [grouped.system, *(m for s in grouped.steps for m in s)]
    stored = [from_openai(to_openai(m)) for m in messages if m is not None]
    kinds = {"apply_patch": "custom_tool_call", "local_shell": "local_shell_call"}
    assert write_input(stored, kinds) == ("instructions", CODEX_INPUT)


def test_a_rewritten_result_keeps_its_image_and_takes_the_new_text() -> None:
    messages, _ = _anthropic(None, CLAUDE_MESSAGES[:4])
    result = next(m for m in messages if isinstance(m, ToolMessage) and m.parts)
    relabelled = replace(result, content="[step 2]\nb.png")
    (block,) = write_view([relabelled]).messages[0]["content"]
    assert block["content"] == [{"type": "text", "text": "[step 2]\nb.png"}, IMAGE]


def test_parts_count_the_image_and_the_thinking() -> None:
    messages, _ = _anthropic(None, CLAUDE_MESSAGES)
    image_only = messages[-1]
    assert image_only.content == "" and image_only.parts[0].tokens == 1  # a 1x1 pixel image
    thought = next(m for m in messages if m.role == "assistant")
    assert "Read first." in thought.parts[0].text


@pytest.mark.parametrize(
    ("spec", "api", "url"),
    [
        ("http://h:8000/v1", "chat", "http://h:8000/v1"),
        ("anthropic:https://api.anthropic.com", "anthropic", "https://api.anthropic.com/v1"),
        ("responses:https://api.openai.com/v1/", "responses", "https://api.openai.com/v1"),
        ("gemini:https://g.example", "gemini", "https://g.example/v1beta"),
        ("gemini:https://g.example/v1", "gemini", "https://g.example/v1"),  # its version kept
    ],
)
def test_upstream_specs_name_an_api_and_a_url(spec: str, api: str, url: str) -> None:
    assert upstream_spec(spec) == (api, url)


def test_a_bad_upstream_spec_says_what_is_taken() -> None:
    with pytest.raises(ValueError, match="anthropic:URL"):
        upstream_spec("anthropic:ftp://x")
