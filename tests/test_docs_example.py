"""The strategy of one's own that docs/strategies/custom.md shows runs as the page says: built
from its dotted path with an option, it stubs an old passing test run (restorable through its
own ``restore``) and leaves a failing one and the recent steps as they are."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextfold import Session

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"


def _run(call_id: str, command: str) -> dict[str, object]:
    call = {"id": call_id, "type": "function", "function": {"name": "bash", "arguments": "{}"}}
    return {"role": "assistant", "content": command, "tool_calls": [call]}


def test_the_docs_example_strategy_stubs_old_passing_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))
    session = Session("quiet_passes:QuietPasses keep=1")
    messages = [
        {"role": "user", "content": "fix the tests"},
        _run("a", "pytest"),
        {"role": "tool", "tool_call_id": "a", "content": "collected 40 items\n40 passed in 2s"},
        _run("b", "pytest"),
        {"role": "tool", "tool_call_id": "b", "content": "39 passed, 1 failed"},
        _run("c", "pytest -x"),
        {"role": "tool", "tool_call_id": "c", "content": "40 passed in 2s"},
    ]
    prepared = session.prepare(messages)
    tools = [m["content"] for m in prepared.messages if m["role"] == "tool"]
    assert tools == [
        "[tests: 40 passed; restore(step=1) shows the output]",
        "39 passed, 1 failed",
        "40 passed in 2s",
    ]
    assert [t["function"]["name"] for t in prepared.tools] == ["restore"]
    assert "collected 40 items" in (session.call_tool("restore", {"step": 1}) or "")
