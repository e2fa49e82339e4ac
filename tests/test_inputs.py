"""Inputs are checked where they enter, and the errors say what to pass: a History's system
message and appended messages, a session id already taken, strategy specs."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextfold.core.errors import (
    ConfigError,
    HistoryError,
    MessageFormatError,
    StoreConflictError,
)
from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage, SystemMessage, ToolCall, ToolMessage
from contextfold.core.store import SQLiteStore
from contextfold.strategies.registry import build_strategy


def test_a_str_system_prompt_is_a_system_message() -> None:
    history = History("You are terse.")
    assert history.system == SystemMessage("You are terse.") and history.system_tokens > 0
    with pytest.raises(HistoryError, match="str or a SystemMessage, got int"):
        History(5)  # type: ignore[arg-type]


def test_history_append_takes_openai_dicts_and_names_a_bad_one() -> None:
    history = History("sys")
    history.append({"role": "user", "content": "hi"})
    step = history.append(
        {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "f"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "out"},
    )
    assert step.messages == (
        AssistantMessage(None, tool_calls=(ToolCall("a", "f"),)),
        ToolMessage("out", "a"),
    )
    with pytest.raises(MessageFormatError, match=r"^messages\[0\]\.role: unknown message role"):
        history.append({"role": "robot", "content": "x"})
    with pytest.raises(MessageFormatError, match=r"messages\[0\]: a message must be .* got str"):
        history.append("hello")  # type: ignore[arg-type]
    assert len(history) == 2  # nothing was appended by the refused calls


def test_a_session_id_already_stored_says_how_to_resume_it(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as store:
        History("sys", store=store, session_id="run-1")
        with pytest.raises(StoreConflictError, match=r"History\.open\(store, 'run-1'\) resumes"):
            History("sys", store=store, session_id="run-1")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("refodl", "unknown strategy 'refodl'; did you mean 'refold'? known: carryon, "),
        ("refold window=0", "refold: window: must be >= 1, got 0"),
        ("window keep=x", "window: keep: must be a valid integer"),
        ("refold windw=3", "refold: windw: unknown option; did you mean 'window'? options: "),
        ("window keep=3 keep=4", "strategy option 'keep' is given twice (keep=3, keep=4)"),
        ("type: window\nkeep: 3\nkeep: 4\n", "strategy spec gives 'keep' twice (line 3)"),
        ("window type=full", "strategy override 'type=full': the strategy is named first"),
    ],
)
def test_strategy_spec_errors_read_in_one_line_each(spec: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        build_strategy(spec)
    assert str(info.value).startswith(message)
    assert "pydantic" not in str(info.value) and "\n" not in str(info.value)


def test_each_bad_option_is_its_own_line() -> None:
    with pytest.raises(ConfigError) as info:
        build_strategy("refold window=0 every=0")
    assert sorted(str(info.value).splitlines()) == [
        "refold: every: must be >= 1, got 0",
        "refold: window: must be >= 1, got 0",
    ]
