"""The framework pages' snippets (docs/integrations/) run as written: each code block
between its adapter markers runs in a fresh interpreter, after a preamble defining the
reader's ``bash`` tool and ``task``, against a scripted OpenAI-compatible server over HTTP
(the client libraries find it through ``OPENAI_BASE_URL``). The scripted agent runs ``bash``
five times, restores the first output and answers with what it got back."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from contextfold.testing.upstreams.chat import ScriptedServer
from tests._frameworks import agent_reply, final_answer

ROOT = Path(__file__).resolve().parent.parent
PAGES = ROOT / "docs" / "integrations"

_TOOL = '''
from tests._frameworks import TASK as task, bash_output

{decorator}
def bash(command: str) -> str:
    """Run a shell command."""
    return bash_output(command)
'''
PREAMBLES = {
    "langchain": _TOOL.format(decorator="@tool").replace(
        "\nfrom tests", "\nfrom langchain_core.tools import tool\nfrom tests"
    ),
    "openai-agents": _TOOL.format(decorator="@function_tool").replace(
        "\nfrom tests", "\nfrom agents import function_tool\nfrom tests"
    ),
    "pydantic-ai": _TOOL.format(decorator=""),
}


def snippet(name: str) -> str:
    text = (PAGES / f"{name}.md").read_text(encoding="utf-8")
    start, end = f"<!-- adapter:{name}:start -->", f"<!-- adapter:{name}:end -->"
    lines = text[text.index(start) + len(start) : text.index(end)].strip().splitlines()
    assert lines[0] == "```python" and lines[-1] == "```", f"the {name} snippet is one block"
    assert len(lines) - 2 <= 12, f"the {name} snippet stays short"
    return "\n".join(lines[1:-1]) + "\n"


@pytest.mark.parametrize("name", sorted(PREAMBLES))
def test_the_snippet_of_each_adapter_page_runs(name: str, tmp_path: Path) -> None:
    code = PREAMBLES[name] + snippet(name)
    with ScriptedServer(agent_reply) as server:
        env = {
            **os.environ,
            "OPENAI_BASE_URL": server.url,
            "OPENAI_API_KEY": "sk-test",
            "OPENAI_AGENTS_DISABLE_TRACING": "1",
            "PYTHONPATH": str(ROOT),
        }
        run = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
        bodies = [body for _, body in server.requests]
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == final_answer()
    assert len(bodies) == 7  # five calls, the restore, the answer
    assert sorted(t["function"]["name"] for t in bodies[0]["tools"]) == ["bash", "restore"]
