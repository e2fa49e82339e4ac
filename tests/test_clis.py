"""Claude Code, Codex CLI and Gemini CLI, installed by ``make npm``, each finish a small coding
task against a scripted upstream of its own protocol: the upstream answers with the tool call
that writes a file and then closes; the file is checked on disk, and what each CLI sent is
checked against what it is known to send (docs/serve/clients-notes.md for the two that serve
speaks to today). The helpers take the base URL, so the same runs go through ``contextfold
serve`` by changing only the URL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contextfold.testing.upstreams.anthropic import ScriptedAnthropic
from contextfold.testing.upstreams.gemini import ScriptedGemini
from contextfold.testing.upstreams.responses import ScriptedResponses
from tests._clis import (
    DONE,
    GEMINI_MODEL,
    Tripwire,
    claude_result,
    claude_writes_file,
    codex_writes_file,
    gemini_result,
    gemini_writes_file,
    run_claude,
    run_codex,
    run_gemini,
)

SOURCE = "def greet():\n    return 'hi'\n"


@pytest.mark.npm("claude")
def test_claude_code_writes_a_file_through_a_scripted_anthropic_upstream(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    target = work / "greet.py"
    with ScriptedAnthropic(claude_writes_file(target, SOURCE)) as up, Tripwire() as wire:
        run = run_claude(
            "Create greet.py with a greet function.",
            base_url=up.url,
            workdir=work,
            home=tmp_path / "home",
            tripwire=wire,
        ).check()
    assert wire.seen == []  # nothing but the base URL was asked for
    assert target.read_text() == SOURCE
    assert claude_result(run)["result"] == DONE
    assert {(r.method, r.path, r.query) for r in up.requests} == {
        ("POST", "/v1/messages", "beta=true")
    }
    first, last = up.requests[0], up.requests[-1]
    assert (
        first.headers["x-api-key"] == "sk-ant-test" and "x-claude-code-session-id" in first.headers
    )
    assert "context-management-2025-06-27" in first.headers["anthropic-beta"]
    assert all(r.body["stream"] is True for r in up.requests)
    tools = {t["name"] for t in first.body["tools"]}
    assert {"Bash", "Edit", "Read", "Write"} <= tools
    answered = last.body["messages"][-1]["content"][-1]
    assert answered["type"] == "tool_result" and "cache_control" in answered
    marked = [b for b in last.body["system"] if "cache_control" in b]
    assert len(marked) == 2  # the system prompt's two breakpoints, and the newest block


@pytest.mark.npm("codex")
def test_codex_writes_a_file_through_a_scripted_responses_upstream(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with ScriptedResponses(codex_writes_file("greet.py", SOURCE)) as up, Tripwire() as wire:
        run_codex(
            "Create greet.py with a greet function.",
            base_url=up.url,
            workdir=work,
            home=tmp_path / "home",
            tripwire=wire,
        ).check()
    assert wire.seen == []
    assert (work / "greet.py").read_text() == SOURCE
    assert [(r.method, r.path) for r in up.requests] == [("POST", "/v1/responses")] * 2
    first, second = up.calls
    assert first["stream"] is True and first["store"] is False
    assert "previous_response_id" not in second  # stateless: the whole input each time
    assert second["input"][: len(first["input"])] == first["input"]
    call, output = second["input"][-2:]
    assert (call["type"], output["type"]) == ("custom_tool_call", "custom_tool_call_output")
    assert call["call_id"] == output["call_id"] and "Success" in output["output"]
    headers = up.requests[0].headers
    assert headers["authorization"] == "Bearer sk-test" and "x-codex-window-id" in headers
    metadata = json.loads(headers["x-codex-turn-metadata"])
    assert metadata["request_kind"] == "turn" and metadata["analytics_enabled"] is False


@pytest.mark.npm("gemini")
def test_gemini_cli_writes_a_file_through_a_scripted_gemini_upstream(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    target = work / "greet.py"
    script = gemini_writes_file(target, SOURCE)
    with ScriptedGemini(script, api_key="gm-test") as up, Tripwire() as wire:
        run = run_gemini(
            "Create greet.py with a greet function.",
            base_url=up.url,
            workdir=work,
            home=tmp_path / "home",
            tripwire=wire,
        ).check()
    assert wire.seen == []
    assert target.read_text() == SOURCE
    assert gemini_result(run)["response"] == DONE
    route = f"/v1beta/models/{GEMINI_MODEL}:streamGenerateContent"
    assert [(r.method, r.path, r.query) for r in up.requests] == [("POST", route, "alt=sse")] * 2
    headers = up.requests[0].headers
    assert headers["x-goog-api-key"] == "gm-test"
    assert headers["user-agent"].startswith("GeminiCLI") and "authorization" not in headers
    first, second = up.calls
    assert second["contents"][: len(first["contents"])] == first["contents"]
    declared = {d["name"] for t in first["tools"] for d in t["functionDeclarations"]}
    assert {"read_file", "replace", "run_shell_command", "write_file"} <= declared
    assert first["generationConfig"]["thinkingConfig"]["includeThoughts"] is True
    call, answer = second["contents"][-2:]
    (sent,) = [p for p in call["parts"] if "functionCall" in p]
    (result,) = answer["parts"]
    assert sent["thoughtSignature"]  # the upstream's, sent back (it refuses a call without)
    # the upstream gave the call no id: Gemini CLI made one up and answers under it
    assert sent["functionCall"]["id"] == result["functionResponse"]["id"]
    assert sent["functionCall"]["id"].startswith("write_file_")
    assert "Successfully created" in result["functionResponse"]["response"]["output"]
