"""Claude Code, Codex CLI and Gemini CLI (``make npm``) each finish their small coding task
*through* ``contextfold serve``: the scripted upstream of the CLI's protocol answers with the
tool call that writes a file, then calls the proxy's ``restore`` in a reply ending in refold's
marker lines, then closes; the file is checked on disk, the answer the CLI prints is checked
word for word (both rounds' texts, no marker line), and each upstream call is checked to be
the strategy's view the proxy recorded (written in the upstream's API), not the CLI's own
request, with the strategy's tool offered beside the CLI's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contextfold.core.store import open_store
from contextfold.serve.apis.anthropic._write import write_view
from contextfold.serve.apis.gemini._write import write_contents
from contextfold.serve.apis.responses._write import write_input
from contextfold.testing.upstreams.anthropic import ScriptedAnthropic
from contextfold.testing.upstreams.chat import ScriptedServer
from contextfold.testing.upstreams.gemini import ScriptedGemini
from contextfold.testing.upstreams.responses import ScriptedResponses
from tests._clis import (
    DONE,
    MARKS,
    SHOWN,
    WRITING,
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
from tests._protocols import TOKEN, marked, proxy_for, root, strip_marks

pytestmark = pytest.mark.slow
SOURCE = "def greet():\n    return 'hi'\n"


def _first_reply(store: Path) -> str:
    """The text of the session's first assistant step, as stored."""
    with open_store(store) as opened:
        (sid,) = opened.list_sessions()
        steps = opened.load_session(sid).steps
    return next(s.messages[0].content or "" for s in steps if s.kind == "assistant")


def _calls(store: Path) -> list[list[object]]:
    with open_store(store) as opened:
        (sid,) = opened.list_sessions()
        return [call["messages"] for call in opened.load_calls(sid)]


@pytest.mark.npm("claude")
def test_claude_code_writes_a_file_through_the_proxy(tmp_path: Path) -> None:
    work, store = tmp_path / "work", tmp_path / "s.db"
    work.mkdir()
    target = work / "greet.py"
    script = claude_writes_file(target, SOURCE, restoring=True)
    with (
        ScriptedAnthropic(script) as up,
        Tripwire() as wire,
        proxy_for(up, "anthropic", store) as proxy,
    ):
        run = run_claude(
            "Create greet.py with a greet function.",
            base_url=root(proxy),
            workdir=work,
            home=tmp_path / "home",
            tripwire=wire,
            extra_env={"ANTHROPIC_CUSTOM_HEADERS": f"X-Contextfold-Token: {TOKEN}"},
        ).check()
    assert wire.seen == []
    assert target.read_text() == SOURCE
    assert claude_result(run)["result"] == SHOWN  # the words the user sees
    assert _first_reply(store) == WRITING + MARKS  # the lines it was not shown, put back
    calls = _calls(store)
    assert len(calls) == len(up.calls) >= 3
    for body, sent in zip(up.calls, calls, strict=True):
        written = write_view(sent)  # type: ignore[arg-type]
        assert strip_marks(body["messages"]) == written.messages
        assert "restore" in {t["name"] for t in body["tools"]}
        assert len(marked(body)) <= 4
    first = up.requests[0]
    assert first.headers["x-api-key"] == "sk-ant-test" and first.query == "beta=true"
    assert "context-management-2025-06-27" in first.headers["anthropic-beta"]
    assert "x-contextfold-token" not in first.headers


@pytest.mark.npm("codex")
def test_codex_writes_a_file_through_the_proxy(tmp_path: Path) -> None:
    work, store = tmp_path / "work", tmp_path / "s.db"
    work.mkdir()
    script = codex_writes_file("greet.py", SOURCE, restoring=True)
    with (
        ScriptedResponses(script) as up,
        Tripwire() as wire,
        proxy_for(up, "responses", store, token=None, no_auth=True) as proxy,
    ):
        run = run_codex(
            "Create greet.py with a greet function.",
            base_url=proxy.url,
            workdir=work,
            home=tmp_path / "home",
            tripwire=wire,
        ).check()
    assert wire.seen == []
    assert (work / "greet.py").read_text() == SOURCE
    assert run.stdout.strip() == SHOWN  # the words the user sees
    assert _first_reply(store) == WRITING + MARKS  # the lines it was not shown, put back
    calls = _calls(store)
    assert len(calls) == len(up.calls) == 3
    kinds = {"apply_patch": "custom_tool_call"}
    for body, sent in zip(up.calls, calls, strict=True):
        assert body["input"] == write_input(sent, kinds)[1]  # type: ignore[arg-type]
        assert "restore" in {t.get("name") for t in body["tools"]}
        assert "previous_response_id" not in body
    assert up.requests[0].headers["authorization"] == "Bearer sk-test"


@pytest.mark.npm("gemini")
def test_gemini_cli_writes_a_file_through_the_proxy(tmp_path: Path) -> None:
    work, store = tmp_path / "work", tmp_path / "s.db"
    work.mkdir()
    target = work / "greet.py"
    script = gemini_writes_file(target, SOURCE, restoring=True)
    with (
        ScriptedGemini(script, api_key="gm-test") as up,
        Tripwire() as wire,
        proxy_for(up, "gemini", store, upstream_key="gm-test") as proxy,
    ):
        run = run_gemini(
            "Create greet.py with a greet function.",
            base_url=root(proxy),
            workdir=work,
            home=tmp_path / "home",
            tripwire=wire,
            api_key=TOKEN,  # the proxy token as its key: the upstream gets the proxy's own
        ).check()
    assert wire.seen == []
    assert target.read_text() == SOURCE
    assert gemini_result(run)["response"] == SHOWN  # the words the user sees
    assert _first_reply(store) == WRITING + MARKS  # the lines it was not shown, put back
    calls = _calls(store)
    assert len(calls) == len(up.calls) >= 3
    for body, sent in zip(up.calls, calls, strict=True):
        assert body["contents"] == write_contents(sent)[1]  # type: ignore[arg-type]
        declared = {d["name"] for t in body["tools"] for d in t["functionDeclarations"]}
        assert {"restore", "write_file"} <= declared
    headers = up.requests[0].headers
    assert headers["x-goog-api-key"] == "gm-test" and TOKEN not in str(headers)


@pytest.mark.npm("gemini")
def test_gemini_cli_writes_a_file_through_the_proxy_to_a_chat_completions_upstream(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    target = work / "greet.py"

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        if body["messages"][-1]["role"] == "tool":
            return {"role": "assistant", "content": DONE}
        arguments = json.dumps({"file_path": str(target), "content": SOURCE})
        call = {"id": "call_w", "type": "function",
                "function": {"name": "write_file", "arguments": arguments}}  # fmt: skip
        return {"role": "assistant", "content": WRITING, "tool_calls": [call]}

    with ScriptedServer(reply) as up, Tripwire() as wire, proxy_for(up, "chat") as proxy:
        run = run_gemini(
            "Create greet.py with a greet function.",
            base_url=root(proxy),
            workdir=work,
            home=tmp_path / "home",
            tripwire=wire,
            api_key=TOKEN,
        ).check()
    assert wire.seen == []
    assert target.read_text() == SOURCE
    assert gemini_result(run)["response"] == DONE
    first, last = (body for _, body in (up.requests[0], up.requests[-1]))
    (write,) = [t["function"] for t in first["tools"] if t["function"]["name"] == "write_file"]
    assert write["parameters"]["properties"]["file_path"]["type"] == "string"
    assert "restore" in {t["function"]["name"] for t in first["tools"]}
    result = last["messages"][-1]
    assert result["role"] == "tool" and result["tool_call_id"] == "call_w"
    assert "Successfully created" in result["content"]
