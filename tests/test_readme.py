"""The README's quickstart runs as written: its exact code block (between the quickstart
markers) is run in a fresh interpreter against a scripted OpenAI-compatible server over HTTP,
which calls the user's tool, then the session's ``restore``, then answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from contextfold.serve.scripted import ScriptedServer

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


def test_the_readme_quickstart_runs_against_an_openai_compatible_server(tmp_path: Path) -> None:
    code = quickstart()
    with ScriptedServer(agent) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-test"}
        run = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
    assert run.returncode == 0, run.stderr
    bodies = [body for _, body in server.requests]
    assert len(bodies) == 3
    assert [t["function"]["name"] for t in bodies[0]["tools"]] == ["bash", "restore"]
    restored = bodies[2]["messages"][-1]
    assert restored["role"] == "tool" and restored["tool_call_id"] == "restore"
    assert "python-is-3" in restored["content"]  # answered by the session, not run_my_tool
    assert "answer: " in run.stdout and "python-is-3" in run.stdout
