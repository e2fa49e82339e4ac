"""The pinned Claude Code (``make npm``) writes its own session log, offline, through
``contextfold serve`` against the scripted Anthropic upstream; the importer reads it from the
``~/.claude/projects`` the run left behind, with no flag: the steps are the session's (the
thinking kept with its signature, the tool call and its result), and each call's billed usage
is exactly what the upstream reported for it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from contextfold.cli import app
from contextfold.core.billing import BilledUsage
from contextfold.core.messages import AssistantMessage, ToolMessage, UserMessage
from contextfold.core.wire.layout import layout_of
from contextfold.importers import Trajectory, iter_trajectories
from contextfold.testing.upstreams.anthropic import (
    AnthropicReply,
    ScriptedAnthropic,
    text,
    thinking,
    tool_use,
)
from tests._clis import Tripwire, run_claude
from tests._protocols import TOKEN, proxy_for, root

pytestmark = [pytest.mark.slow, pytest.mark.npm("claude")]
runner = CliRunner()
SOURCE = "def greet():\n    return 'hi'\n"
PLAN = "The file does not exist yet: write it."
CHECKED = "It is written."


def _script(target: Path) -> Any:
    def reply(body: dict[str, Any]) -> AnthropicReply:
        last = body["messages"][-1]["content"]
        if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
            return [thinking(CHECKED), text("Done: the file is written.")]
        write = tool_use("Write", {"file_path": str(target), "content": SOURCE})
        return [thinking(PLAN), text("Writing the file."), write]

    return reply


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Any], list[Any], Path]:
    """One run of Claude Code through serve: what the upstream billed, and the HOME it used."""
    tmp = tmp_path_factory.mktemp("claude")
    work, home = tmp / "work", tmp / "home"
    work.mkdir()
    with (
        ScriptedAnthropic(_script(work / "greet.py"), min_cache_tokens=0) as up,
        Tripwire() as wire,
        proxy_for(up, "anthropic", tmp / "s.db") as proxy,
    ):
        run_claude(
            "Create greet.py with a greet function.",
            base_url=root(proxy),
            workdir=work,
            home=home,
            tripwire=wire,
            extra_env={"ANTHROPIC_CUSTOM_HEADERS": f"X-Contextfold-Token: {TOKEN}"},
        ).check()
    assert wire.seen == []
    return up.calls, up.bills, home


def _read(home: Path) -> Trajectory:
    items = list(iter_trajectories([home / ".claude" / "projects"]))
    [trajectory] = items
    assert isinstance(trajectory, Trajectory), trajectory
    return trajectory


def test_the_log_claude_code_wrote_reads_as_its_session(session: Any) -> None:
    _calls, _bills, home = session
    t = _read(home)
    assert t.meta["format"] == "claude-code" and t.meta["version"]
    [prompt], [plan, result], [done] = t.steps
    assert isinstance(prompt, UserMessage) and prompt.content.endswith("greet function.")
    assert isinstance(plan, AssistantMessage) and plan.content == "Writing the file."
    [call] = plan.tool_calls
    assert call.name == "Write" and json.loads(call.arguments)["content"] == SOURCE
    assert isinstance(result, ToolMessage) and result.tool_call_id == call.id
    assert isinstance(done, AssistantMessage) and done.content == "Done: the file is written."


def test_thinking_is_kept_with_its_signature_as_serve_keeps_it(session: Any) -> None:
    _calls, _bills, home = session
    plan = _read(home).steps[1][0]
    layout = layout_of(plan, "anthropic")
    assert layout is not None
    [kept] = [b["$raw"] for b in layout["t"] if "$raw" in b]
    assert kept["type"] == "thinking" and kept["thinking"] == PLAN and kept["signature"]
    assert PLAN in "".join(p.text for p in plan.parts)  # counted with the message


def test_each_calls_billed_usage_is_what_the_upstream_reported(session: Any) -> None:
    _calls, bills, home = session
    t = _read(home)
    assert len(t.calls) == 2 == len(bills)
    for recorded, bill in zip(t.calls, bills, strict=True):
        cached = bill.cached
        expected = BilledUsage(cached.uncached, cached.read, cached.written, 0, bill.output)
        assert recorded.usage == expected and recorded.output_final
        assert recorded.at is not None and recorded.model == t.model
    assert t.calls[0].at <= t.calls[1].at  # type: ignore[operator]


def test_the_system_prompt_is_the_one_the_log_records(session: Any) -> None:
    calls, _bills, home = session
    system = _read(home).system
    assert system is not None
    sent = "".join(b["text"] for b in calls[0]["system"])
    assert len(system.content) > 1000 and system.content in sent


def test_replayed_as_full_the_calibrated_meter_gives_the_bill(session: Any, tmp_path: Path) -> None:
    """The log's calls priced as billed, and replay's own full beside them: the calibrated
    counter (the unlogged tool schemas measured from the first call) and the provider's cache
    rule give the bill back."""
    _calls, bills, home = session
    out = tmp_path / "replayed.json"
    done = runner.invoke(
        app, ["replay", str(home / ".claude" / "projects"), "--json", str(out)],
        env={"COLUMNS": "80"},
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "full as billed: 1 session" in done.output
    billed = json.loads(out.read_text())["billed"]
    assert billed["billed"]["prompt_tokens"] == sum(b.cached.total for b in bills)
    assert billed["billed"]["output_tokens"] == sum(b.output for b in bills)
    assert billed["full"]["prompt_tokens"] == pytest.approx(
        billed["billed"]["prompt_tokens"], rel=0.01
    )
    assert billed["full"]["cost_usd"] == pytest.approx(billed["billed"]["cost_usd"], rel=0.03)
