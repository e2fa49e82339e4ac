"""Every Python block of the documentation runs (:mod:`tests._docs_blocks` finds them).

Each page's blocks run in order in one fresh interpreter, each after a preamble defining only
what the page leaves to the reader (their key, messages, tools, tool function), then a few
lines that print what the page says comes out, which the test checks. Blocks that talk to a
model run against scripted servers over HTTP: the serve pages' through a ``contextfold serve``
started in front of a scripted Chat Completions upstream (the page's address,
``http://127.0.0.1:8900``, becomes that proxy's), the others with ``OPENAI_BASE_URL`` at the
scripted server, as ``test_readme.py`` runs the quickstart. The blocks another test runs are
listed with it (:data:`ELSEWHERE`); a block marked ``<!-- docs: not run: WHY -->`` must be in
:data:`NOT_RUN` with its reason (there are none)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from contextfold.core.store import open_store
from contextfold.testing.upstreams.chat import ScriptedServer
from tests._docs_blocks import DOCS, blocks, page_blocks, run_blocks
from tests._protocols import TOKEN, proxy_for

ADDRESS = "http://127.0.0.1:8900"
"""Where the serve pages' blocks say the proxy is (serve's default port)."""

ELSEWHERE = {
    "getting-started.md": ("<!-- quickstart:start -->", "test_readme.py"),
    "integrations/langchain.md": ("<!-- adapter:langchain:start -->", "test_readme_adapters.py"),
    "integrations/openai-agents.md": (
        "<!-- adapter:openai-agents:start -->",
        "test_readme_adapters.py",
    ),
    "integrations/pydantic-ai.md": (
        "<!-- adapter:pydantic-ai:start -->",
        "test_readme_adapters.py",
    ),
}
"""Pages whose blocks another test runs: the marker it finds them by, and that test."""

NOT_RUN: dict[tuple[str, int], str] = {}
"""Blocks deliberately not run, by page and place: why (each also marked on its page)."""

BASH = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
CHAT_TOOLS = [{"type": "function", "function": {"name": "bash", "parameters": BASH}}]
KEYS = f'UPSTREAM_KEY = "sk-test"\nTOKEN = "{TOKEN}"\n'


@dataclass(frozen=True)
class Page:
    """How a page's blocks run: ``steps`` holds, for each block, the code before it and the
    code after it; ``prints`` is what the after-code prints, in order."""

    steps: list[tuple[str, str]]
    prints: list[str]
    served: str | None = None
    """``proxy`` (through contextfold serve), ``openai`` (the scripted server alone) or None."""
    env: dict[str, str] = field(default_factory=dict)
    named: str | None = None
    """A session the proxy must have stored under this name (``X-Contextfold-Session``)."""


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def model(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model: a tool result gets ``answer: RESULT``; the pages' placeholder task
    (``"..."``) gets a ``bash`` call; anything else gets ``hello``."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return {"role": "assistant", "content": f"answer: {_text(last['content'])}"}
    if _text(last.get("content")) == "...":
        fn = {"name": "bash", "arguments": json.dumps({"command": "ls"})}
        call = {"id": "call-1", "type": "function", "function": fn}
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"role": "assistant", "content": "hello"}


_LOOP = """
def run_my_loop(session, task):  # the reader's loop, its model's replies written out
    messages = [{"role": "user", "content": task}]
    for k in range(3):
        session.prepare(messages)
        call = {"id": f"c{k}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{k}", "content": f"output {k}"})
tasks = ["fix the tests", "add a test"]
"""
_PASSES = """
def run(i, out):
    call = {"id": i, "type": "function", "function": {"name": "bash", "arguments": "{}"}}
    return [{"role": "assistant", "content": "pytest", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": i, "content": out}]
messages = [{"role": "user", "content": "fix the tests"}, *run("a", "40 passed in 2s"),
            *run("b", "39 passed, 1 failed"), *run("c", "40 passed in 2s")]
print([m["content"] for m in session.prepare(messages).messages if m["role"] == "tool"][0])
"""
_AGENT_TOOL = """
from agents import function_tool

@function_tool
def bash(command: str) -> str:
    \"\"\"Run a shell command.\"\"\"
    return f"ran {command}"
"""

_SDK_CHAT = KEYS + f"messages = [{{'role': 'user', 'content': 'Hi.'}}]\ntools = {CHAT_TOOLS}\n"
_SDK_RESPONSES = f"tools = [{{'type': 'function', 'name': 'bash', 'parameters': {BASH}}}]\n"
_SDK_RESPONSES += "result = '3 files'\n"
_CLIENT = "from openai import OpenAI\nclient = OpenAI()\n"
_CLIENT += f"messages = [{{'role': 'user', 'content': 'Hi.'}}]\ntools = {CHAT_TOOLS}\n"
_MY_TOOL = """
import json
name, args = "bash", '{"command": "ls"}'
def run_my_tool(name, args):
    return "ran " + json.loads(args)["command"]
"""

PAGES: dict[str, Page] = {
    "serve/openai-sdk.md": Page(
        served="proxy",
        steps=[
            (_SDK_CHAT, "print(reply.choices[0].message.content)"),
            (_SDK_RESPONSES, "print(later.output_text)"),
        ],
        prints=["hello", "answer: 3 files"],
        named="task-7",
    ),
    "serve/agents-sdk.md": Page(
        served="proxy",
        steps=[(KEYS + _AGENT_TOOL, "print(result.final_output)")],
        prints=["answer: ran ls"],
    ),
    "serve/langchain.md": Page(
        served="proxy", steps=[(KEYS, "print(model.invoke('Hi.').text)")], prints=["hello"]
    ),
    "library/loop.md": Page(
        steps=[("", "")],
        prints=["3 28 0", "1 failed", "error: the arguments of restore must be a JSON object"],
    ),
    "library/session.md": Page(
        served="openai",
        steps=[(_CLIENT, "print(reply.choices[0].message.content)"), (_MY_TOOL, "print(output)")],
        prints=["hello", "ran ls"],
    ),
    "library/testing.md": Page(  # each block starts the scripted model or server it shows
        steps=[("", "")] * 4,
        prints=[
            "answered [('6 * 7', '42')]",
            "42",
            "Done: ran pytest.",
            "2 ['user', 'assistant', 'tool']",
            "Two files.",
            "400 invalid_request_error",
            "['run-1']",
        ],
    ),
    "strategies/custom.md": Page(
        steps=[("", ""), ("", _PASSES)],
        prints=["[tests: 40 passed; restore(step=1) shows the output]"],
        env={"PYTHONPATH": str(DOCS / "examples")},
    ),
    "strategies/learning.md": Page(steps=[(_LOOP, "print(experience.lengths)")], prints=["[3, 3]"]),
}


def test_every_python_block_of_the_docs_is_run() -> None:
    found = blocks()
    assert len(found) >= 12
    for block in found:
        where = f"{block.page} block {block.index}"
        if block.not_run is not None:
            assert NOT_RUN.get((block.page, block.index)) == block.not_run, where
        elif block.page in ELSEWHERE:
            marker, test = ELSEWHERE[block.page]
            assert block.before.rstrip().endswith(marker), f"{where}: {test} finds it by {marker}"
        else:
            assert block.page in PAGES, f"{where} is run by no test: add it to PAGES"
    for page, spec in PAGES.items():
        assert len(spec.steps) == sum(b.page == page for b in found), page
    assert len(NOT_RUN) == sum(b.not_run is not None for b in found) == 0


def _pieces(page: str, spec: Page, rewrite: Callable[[str], str]) -> list[tuple[str, str]]:
    found = [b for b in blocks() if b.page == page]
    pieces: list[tuple[str, str]] = []
    for block, (before, after) in zip(found, spec.steps, strict=True):
        name = f"docs/{page}[{block.index}]"
        pieces += [(f"{name} preamble", before), (name, rewrite(block.code))]
        pieces.append((f"{name} check", after))
    return pieces


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_python_blocks_of_each_page_run(page: str, tmp_path: Path) -> None:
    spec = PAGES[page]
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", **spec.env}
    with ScriptedServer(model) as server:
        if spec.served == "proxy":
            with proxy_for(server, "chat", tmp_path / "s.db") as proxy:
                root = str(proxy.url).removesuffix("/v1")
                assert any(ADDRESS in b.code for b in blocks() if b.page == page)
                pieces = _pieces(page, spec, lambda c: c.replace(ADDRESS, root))
                run = run_blocks(pieces, env=env, cwd=tmp_path)
            with open_store(tmp_path / "s.db") as store:
                ids = store.list_sessions()
            assert ids and (spec.named is None or spec.named in ids), ids  # through the proxy
        else:
            env["OPENAI_BASE_URL"] = server.url
            run = run_blocks(_pieces(page, spec, lambda c: c), env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == spec.prints, run.stdout + run.stderr
    bodies = [body for _, body in server.requests]
    assert bool(bodies) == (spec.served is not None)
    for body in bodies:  # the session's view: the strategy's restore offered beside the tools
        assert "restore" in [t["function"]["name"] for t in body.get("tools") or []]


def test_a_block_marked_not_run_and_an_included_file_are_found_as_mkdocs_shows_them() -> None:
    text = (
        "<!-- docs: not run: it needs your cluster -->\n```python\nray.init()\n```\n\n"
        '```python\n--8<-- "examples/quiet_passes.py"\n```\n'
    )
    marked, included = page_blocks("page.md", text)
    assert marked.not_run == "it needs your cluster" and marked.code == "ray.init()\n"
    assert included.not_run is None and included.index == 1
    assert included.code == (DOCS / "examples" / "quiet_passes.py").read_text()
