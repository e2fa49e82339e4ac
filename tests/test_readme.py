"""The README's quickstart runs as written: its exact code block (between the quickstart
markers) is run in a fresh interpreter against a scripted OpenAI-compatible server over HTTP,
which calls the user's tool, then the session's ``restore``, then answers; against one that
never stops calling tools, its step limit ends it. ``make demo`` is on the README's first
screen."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from contextfold.testing.upstreams.chat import ScriptedServer

README = Path(__file__).resolve().parent.parent / "README.md"
START, END = "<!-- quickstart:start -->", "<!-- quickstart:end -->"


def quickstart() -> str:
    text = README.read_text(encoding="utf-8")
    block = text[text.index(START) + len(START) : text.index(END)].strip()
    lines = block.splitlines()
    assert lines[0] == "```python" and lines[-1] == "```", "the quickstart is one python block"
    assert 15 <= len(lines) - 2 <= 25, "the quickstart is 15-25 lines"
    return "\n".join(lines[1:-1]) + "\n"


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    fn = {"name": name, "arguments": json.dumps(arguments)}
    return {"role": "assistant", "content": None, "tool_calls": [{"id": name, "function": fn}]}


def agent(body: dict[str, Any]) -> dict[str, Any]:
    """Runs a command, restores the step that ran it, and answers with what it got back."""
    done = sum(m["role"] == "assistant" for m in body["messages"])
    if done == 0:
        return _call("bash", {"command": "echo python-is-3"})
    if done == 1:
        return _call("restore", {"step": 1})
    return {"role": "assistant", "content": f"answer: {body['messages'][-1]['content'].strip()}"}


def _run(reply: Any, cwd: Path) -> tuple[subprocess.CompletedProcess[str], list[Any]]:
    with ScriptedServer(reply) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-test"}
        run = subprocess.run(
            [sys.executable, "-c", quickstart()],
            capture_output=True,
            text=True,
            env=env,
            cwd=cwd,
            timeout=120,
        )
    return run, [body for _, body in server.requests]


def test_the_readme_quickstart_runs_against_an_openai_compatible_server(tmp_path: Path) -> None:
    run, bodies = _run(agent, tmp_path)
    assert run.returncode == 0, run.stderr
    assert len(bodies) == 3
    assert [t["function"]["name"] for t in bodies[0]["tools"]] == ["bash", "restore"]
    restored = bodies[2]["messages"][-1]
    assert restored["role"] == "tool" and restored["tool_call_id"] == "restore"
    assert "python-is-3" in restored["content"]  # answered by the session, not run_my_tool
    assert "answer: " in run.stdout and "python-is-3" in run.stdout


def test_the_quickstart_stops_at_its_step_limit_when_the_model_never_stops(tmp_path: Path) -> None:
    run, bodies = _run(lambda body: _call("bash", {"command": "echo again"}), tmp_path)
    assert run.returncode == 0, run.stderr
    limit = re.search(r"for step in range\((\d+)\)", quickstart())
    assert limit and len(bodies) == int(limit[1])
    assert run.stdout.strip() == f"stopped after {limit[1]} steps without an answer"
    assert f"stops after {limit[1]} model calls" in README.read_text(encoding="utf-8")


def test_make_demo_is_on_the_readmes_first_screen() -> None:
    first = README.read_text(encoding="utf-8").splitlines()[:25]
    assert any("`make demo`" in line for line in first)
