"""Claude Code and Codex CLI (``make npm``) each finish their small coding task *through*
``contextfold serve``: the scripted upstream of the CLI's protocol answers with the tool call
that writes a file, then calls the proxy's ``restore`` in a reply ending in refold's marker
lines, then closes; the file is checked on disk, the answer the CLI prints is checked word
for word (both rounds' texts, no marker line), and each upstream call is checked to be the
strategy's view the proxy recorded (written in the upstream's API), not the CLI's own
request, with the strategy's tool offered beside the CLI's."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextfold.core.store import open_store
from contextfold.serve.apis.anthropic._write import write_view
from contextfold.serve.apis.responses._write import write_input
from contextfold.testing.upstreams.anthropic import ScriptedAnthropic
from contextfold.testing.upstreams.responses import ScriptedResponses
from tests._clis import (
    MARKS,
    SHOWN,
    WRITING,
    Tripwire,
    claude_result,
    claude_writes_file,
    codex_writes_file,
    run_claude,
    run_codex,
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
