"""The pinned Codex CLI and Gemini CLI (``make npm``) each write their own session log, offline,
through ``contextfold serve`` against the scripted upstream of their API; the importer reads it
from the HOME the run left behind, with no flag: the steps are the session's (the tool call
that writes the file, its result, the closing answer) and each call's billed usage is exactly
what the upstream reported for it. Claude Code's: tests/test_import_claude_code_cli.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contextfold.core.billing import BilledUsage
from contextfold.core.messages import AssistantMessage, ToolMessage, UserMessage
from contextfold.importers import Trajectory, iter_trajectories
from contextfold.testing.upstreams._cache import Bill
from contextfold.testing.upstreams.gemini import ScriptedGemini
from contextfold.testing.upstreams.responses import ScriptedResponses
from tests._clis import (
    DONE,
    GEMINI_MODEL,
    WRITING,
    Tripwire,
    codex_writes_file,
    gemini_writes_file,
    run_codex,
    run_gemini,
)
from tests._protocols import TOKEN, proxy_for, root

pytestmark = pytest.mark.slow
SOURCE = "def greet():\n    return 'hi'\n"
PROMPT = "Create greet.py with a greet function."


def _bill(bill: Bill) -> BilledUsage:
    c = bill.cached
    return BilledUsage(c.uncached, c.read, c.written - c.written_1h, c.written_1h, bill.output)


def _one(folder: Path) -> Trajectory:
    [t] = list(iter_trajectories([folder]))
    assert isinstance(t, Trajectory), t
    return t


def _check_calls(t: Trajectory, bills: list[Bill]) -> None:
    assert [c.usage for c in t.calls] == [_bill(b) for b in bills]
    assert all(c.at is not None and c.output_final for c in t.calls)


@pytest.mark.npm("codex")
def test_codex_rollout_reads_as_its_session(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    with (
        ScriptedResponses(codex_writes_file("greet.py", SOURCE)) as up,
        Tripwire() as wire,
        proxy_for(up, "responses", tmp_path / "s.db", token=None, no_auth=True) as proxy,
    ):
        run_codex(PROMPT, base_url=proxy.url, workdir=work, home=home, tripwire=wire).check()
    t = _one(home / ".codex" / "sessions")
    assert t.meta["format"] == "codex" and t.meta["version"]
    assert t.system is not None and len(t.system.content) > 1000  # the rollout keeps it
    *context, patch, done = t.steps
    assert any(isinstance(m, UserMessage) and m.content == PROMPT for [m] in context)
    call, result = patch
    assert isinstance(call, AssistantMessage) and call.tool_calls[0].name == "apply_patch"
    assert "greet.py" in call.tool_calls[0].arguments
    assert isinstance(result, ToolMessage) and result.tool_call_id == call.tool_calls[0].id
    assert isinstance(done[0], AssistantMessage) and done[0].content == DONE
    _check_calls(t, up.bills)
    assert t.model == t.calls[0].model and t.model


@pytest.mark.npm("gemini")
def test_gemini_cli_chat_reads_as_its_session(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    target = work / "greet.py"
    with (
        ScriptedGemini(gemini_writes_file(target, SOURCE), api_key="gm-test") as up,
        Tripwire() as wire,
        proxy_for(up, "gemini", tmp_path / "s.db", upstream_key="gm-test") as proxy,
    ):
        run_gemini(
            PROMPT, base_url=root(proxy), workdir=work, home=home, tripwire=wire, api_key=TOKEN
        ).check()
    t = _one(home / ".gemini")
    assert t.meta["format"] == "gemini-cli" and t.system is None
    [ask], [call, result], [done] = t.steps
    assert isinstance(ask, UserMessage) and ask.content.endswith(PROMPT)
    assert isinstance(call, AssistantMessage) and call.content == WRITING
    [write] = call.tool_calls
    assert write.name == "write_file" and json.loads(write.arguments)["content"] == SOURCE
    assert isinstance(result, ToolMessage) and result.tool_call_id == write.id
    assert isinstance(done, AssistantMessage) and done.content == DONE
    _check_calls(t, up.bills)
    assert t.model == GEMINI_MODEL
