"""Real clients through contextfold serve: mini-swe-agent (installed from PyPI) fixing a bug in
a temporary git repository against a scripted upstream, and one round trip with the embedded
model as the upstream (``--upstream local``)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from contextfold.core.store import SQLiteStore
from contextfold.serve import ServeConfig
from contextfold.serve.runner import ProxyThread
from contextfold.testing.upstreams.chat import ScriptedServer
from tests._serve import TOKEN, client, serving


def _bash(command: str, n: int) -> dict[str, Any]:
    call = {"id": f"call_{n}", "type": "function"}
    call["function"] = {"name": "bash", "arguments": json.dumps({"command": command})}
    return {"role": "assistant", "content": f"THOUGHT: step {n}", "tool_calls": [call]}


def _swe_policy(body: dict[str, Any]) -> dict[str, Any]:
    """A scripted engineer: read the file, fix what it saw, submit. It acts on what the view
    shows it (the bug must be visible in the output it was sent)."""
    seen = [m.get("content") or "" for m in body["messages"] if m["role"] == "tool"]
    if not seen:
        return _bash("cat calc.py", 0)
    if len(seen) == 1 and "return a - b" in seen[0]:
        fix = "sed -i 's/return a - b/return a + b/' calc.py"
        return _bash(f"{fix} && python3 -c 'import calc; assert calc.add(2, 3) == 5'", 1)
    if len(seen) == 2 and "<returncode>0</returncode>" in seen[1]:
        return _bash("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff", 2)
    return {"role": "assistant", "content": f"lost: {seen[-1][:200]}"}


def _repo(path: Path) -> Path:
    path.mkdir()
    (path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(path)]
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "start"], check=True)
    return path


def test_mini_swe_agent_fixes_a_bug_through_the_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # offline: no cost map download
    monkeypatch.setenv("MSWEA_CONFIGURED", "true")
    monkeypatch.setenv("MSWEA_COST_TRACKING", "ignore_errors")
    import yaml
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.config import builtin_config_dir
    from minisweagent.environments.local import LocalEnvironment
    from minisweagent.models.litellm_model import LitellmModel

    repo = _repo(tmp_path / "repo")
    db = tmp_path / "s.db"
    config = yaml.safe_load((builtin_config_dir / "default.yaml").read_text())
    with ScriptedServer(_swe_policy) as up, serving(up, db, strategy="refold") as proxy:
        model = LitellmModel(
            model_name="openai/scripted",
            model_kwargs={"api_base": proxy.url, "api_key": TOKEN, "drop_params": True},
            cost_tracking="ignore_errors",
        )
        env = LocalEnvironment(cwd=str(repo), timeout=30)
        agent = DefaultAgent(model, env, **{**config["agent"], "step_limit": 6})
        result = agent.run("calc.add subtracts instead of adding; fix it.")
    assert result["exit_status"] == "Submitted", agent.messages[-1]
    assert "+    return a + b" in result["submission"]
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert [m["function"]["name"] for m in up.requests[0][1]["tools"]] == ["bash", "restore"]
    with SQLiteStore(db) as store:
        (sid,) = store.list_sessions()
        assert [s.kind for s in store.load_session(sid).steps] == ["user", "assistant", "assistant"]
        assert len(store.load_calls(sid)) == 3


@pytest.mark.embedded
def test_the_embedded_model_as_the_upstream(tmp_path: Path) -> None:
    config = ServeConfig(upstream="local", no_auth=True, threads=1, strategy="full")
    with ProxyThread(config) as proxy:
        chat = client(proxy)
        messages = [{"role": "user", "content": "Say hello."}]
        reply = chat.chat.completions.create(model="local", messages=messages, max_tokens=8)
        assert reply.choices[0].message.content
        assert reply.usage is not None and reply.usage.prompt_tokens > 0
        chunks = list(
            chat.chat.completions.create(
                model="local", messages=messages, max_tokens=8, stream=True
            )
        )
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert text == reply.choices[0].message.content  # greedy: the same reply
        assert chat.models.list().data[0].id
