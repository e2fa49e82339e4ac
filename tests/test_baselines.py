"""The deterministic ReFold B.1 baselines: window, clip, prune, recall and chain."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextfold.core.errors import ConfigError
from contextfold.core.history import History, Step
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.core.protocols import Strategy, ToolProvider
from contextfold.core.view import View, render_and_check
from contextfold.strategies.chain import ChainStrategy
from contextfold.strategies.clip import ClipConfig, ClipStrategy
from contextfold.strategies.full import FullStrategy
from contextfold.strategies.mask import MaskConfig, MaskStrategy
from contextfold.strategies.prune import PruneStrategy, Target, classify
from contextfold.strategies.recall import STUB, RecallConfig, RecallStrategy
from contextfold.strategies.registry import build_strategy
from contextfold.strategies.transform import TransformStrategy
from contextfold.strategies.window import WindowConfig, WindowStrategy
from tests.gen import histories

# --- helpers ---------------------------------------------------------------------------------


def bash(index: int, command: str, output: str) -> tuple[Message, ...]:
    """One mini-swe-agent style step: a ``bash`` call and its wrapped output."""
    call = ToolCall(f"c{index}", "bash", json.dumps({"command": command}))
    wrapped = f"<returncode>0</returncode>\n<output>\n{output}</output>"
    return AssistantMessage(None, tool_calls=(call,)), ToolMessage(wrapped, call.id, name="bash")


def make(*steps: Sequence[Message] | str) -> History:
    """A history with a system message; a string is a user step."""
    history = History(SystemMessage("you are an agent"))
    for step in steps:
        history.append(*((UserMessage(step),) if isinstance(step, str) else step))
    return history


def snapshot(history: History) -> list[Step]:
    return list(history.steps)


def render(strategy: Strategy, history: History, budget: int | None = None) -> View:
    before = snapshot(history)
    view = render_and_check(strategy, history, budget)  # the render, the budget a hint
    assert snapshot(history) == before and len(history) == len(before)  # never mutated
    return view


def tool_texts(view: View) -> list[str]:
    return [m.content for m in view.messages if isinstance(m, ToolMessage)]


def shown_steps(view: View) -> set[int]:
    return {s for p in view.provenance for s in p.steps}


# --- window ----------------------------------------------------------------------------------


def test_window_keeps_task_latest_user_and_last_steps_whole() -> None:
    steps: list[Sequence[Message] | str] = ["the task"]
    steps += [bash(i, f"echo {i}", f"{i}\n") for i in range(1, 4)]
    steps += ["a hint"]  # step 4: the latest user message, older than the window
    steps += [bash(i, f"echo {i}", f"{i}\n") for i in range(5, 21)]
    history = make(*steps)
    view = render(WindowStrategy(WindowConfig(keep=10)), history)
    assert shown_steps(view) == {0, 4, *range(11, 21)}
    assert view.messages[0] == history.system
    dropped = view.elisions
    assert {e.reason for e in dropped} == {"window"}
    assert all(e.restore is None for e in dropped)
    assert sorted({s for e in dropped for s in e.steps}) == [1, 2, 3, *range(5, 11)]
    full = sum(history[s].total_tokens for s in [1, 2, 3, *range(5, 11)])
    assert view.removed_tokens == view.unrecoverable_tokens == full


def test_window_larger_than_history_changes_nothing() -> None:
    history = make("task", bash(1, "ls", "a\n"), "more")
    view = render(build_strategy("window"), history)
    assert view.messages == tuple(history.messages()) and view.elisions == ()


def test_window_zero_keeps_only_the_task_and_the_latest_user_message() -> None:
    history = make("task", bash(1, "ls", "a\n"), "next", bash(3, "ls", "b\n"))
    view = render(build_strategy("window keep=0"), history)
    assert shown_steps(view) == {0, 2}


# --- clip ------------------------------------------------------------------------------------


def test_clip_keeps_head_and_tail_around_a_marker() -> None:
    long = "".join(chr(ord("a") + i % 26) for i in range(3000))
    call = ToolCall("c1", "read", "{}")
    history = make("task", (AssistantMessage(None, tool_calls=(call,)), ToolMessage(long, "c1")))
    history.append(
        AssistantMessage(None, tool_calls=(ToolCall("c2", "read", "{}"),)),
        ToolMessage("short", "c2"),
    )
    view = render(ClipStrategy(), history)
    clipped, short = tool_texts(view)
    assert clipped == f"{long[:667]}\n[... 2000 characters clipped ...]\n{long[-333:]}"
    assert short == "short"
    (elision,) = view.elisions
    assert (elision.steps, elision.reason, elision.restore) == ((1,), "clip", None)
    original = history[1].tokens[1]
    assert elision.tokens == original - history.count(view.messages[3])


def test_clip_options() -> None:
    history = make("task", bash(1, "cat x", "0123456789" * 10))
    view = render(build_strategy("clip max_chars=20 head_share=0.5"), history)
    (text,) = tool_texts(view)
    assert text == "<returncod\n[... 125 characters clipped ...]\n9</output>"


# --- prune -----------------------------------------------------------------------------------

SOURCE = """\
# Copyright (c) 2024 Example Corp. Licensed under the MIT license.
\"\"\"Module docstring.\"\"\"

import os
import re
import sys
from collections import (
    OrderedDict,
    defaultdict,
)
import numpy as np

# a comment
def f(x):
    return x  # an inline comment stays
"""


def test_prune_file_read_drops_blanks_comments_license_and_collapses_imports() -> None:
    history = make("task", bash(1, "cat pkg/mod.py", SOURCE))
    view = render(PruneStrategy(), history)
    (text,) = tool_texts(view)
    assert text == (
        "<returncode>0</returncode>\n<output>\n"
        '"""Module docstring."""\n'
        "[8 import lines: os, re, sys, collections, numpy]\n"
        "def f(x):\n"
        "    return x  # an inline comment stays\n"
        "[prune: 2 blank, 1 comment, 1 license-header lines dropped; 8 import lines collapsed]\n"
        "</output>"
    )
    (elision,) = view.elisions
    assert (elision.reason, elision.restore, elision.steps) == ("prune", None, (1,))
    assert elision.tokens > 0


def test_prune_numbered_listing_keeps_numbers_and_a_mid_file_header() -> None:
    listing = "    10\t# Copyright notice in the middle\n    11\t\n    12\tx = 1\n"
    history = make("task", bash(1, "nl -ba a.py | sed -n '10,12p'", listing))
    (text,) = tool_texts(render(PruneStrategy(), history))
    assert "    12\tx = 1\n" in text and "    11\t" not in text
    assert "[prune: 1 blank, 1 comment lines dropped]" in text  # a comment, not a header


def test_prune_c_block_comments() -> None:
    source = "/*\n * Licensed under GPL\n */\n#include <x.h>\n/* note\n   more */\nint x; // c\n"
    history = make("task", bash(1, "head -n 40 src/x.c", source))
    (text,) = tool_texts(render(PruneStrategy(), history))
    assert "#include <x.h>\nint x; // c\n[prune: 2 comment, 3 license-header" in text


def test_prune_search_caps_per_file_and_in_all() -> None:
    lines = [f"a.py:{i}:hit {i}" for i in range(1, 9)] + ["b.py:1:hit", "b.py:2:hit"]
    history = make("task", bash(1, "grep -rn hit .", "\n".join(lines) + "\n"))
    (text,) = tool_texts(render(PruneStrategy(), history))
    body = text.removeprefix("<returncode>0</returncode>\n<output>\n").removesuffix("</output>")
    assert body.splitlines() == [*lines[:5], "[... 3 more matches in a.py ...]", *lines[8:]]
    capped = render(build_strategy("prune max_matches=6"), history)
    body = tool_texts(capped)[0].split("<output>\n")[1]
    assert body.splitlines() == [
        *lines[:5],
        "[... 3 more matches in a.py ...]",
        "b.py:1:hit",
        "[... 1 more match in 1 file dropped (at most 6 shown) ...]",
        "</output>",
    ]


def test_prune_search_groups_and_single_file_lines() -> None:
    groups = "\n--\n".join(f"1{i}:def f{i}():\n1{i}-    pass" for i in range(7))
    history = make("task", bash(1, "grep -n -A1 'def ' a.py", groups + "\n"))
    body = tool_texts(render(PruneStrategy(), history))[0].split("<output>\n")[1]
    assert body.count("def f") == 5 and "[... 2 more matches ...]" in body


def test_prune_leaves_other_outputs_alone() -> None:
    history = make(
        "task",
        bash(1, "python run.py", "\n\n# not a file\nimport os\n" * 3),
        bash(2, "cat <<'EOF' > x.py\nimport os\nEOF", "\n\n"),
        bash(3, "grep -c x a.py", "1\n"),  # a search with nothing to drop
    )
    view = render(PruneStrategy(), history)
    assert view.messages == tuple(history.messages()) and view.elisions == ()


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("bash", {"command": "cat a.py"}, Target("read", "py", True)),
        ("bash", {"command": "cd /r && nl -ba x.c | sed -n '5,9p'"}, Target("read", "c", False)),
        ("bash", {"command": "grep -rn foo . 2>/dev/null | head -20"}, Target("search")),
        ("bash", {"command": "find . -name '*.py' | xargs grep -l foo"}, Target("search")),
        ("bash", {"command": "sed -i 's/a/b/' x.py"}, None),
        ("bash", {"command": "cat a.py > b.py"}, None),
        ("bash", {"command": "python -c 'print(1)'"}, None),
        ("read_file", {"path": "src/a.rs"}, Target("read", "rs", True)),
        ("read_file", {"path": "a.py", "offset": 40}, Target("read", "py", False)),
        ("str_replace_editor", {"command": "view", "path": "a.go"}, Target("read", "go")),
        ("str_replace_editor", {"command": "create", "path": "a.go"}, None),
        ("search_files", {"pattern": "x"}, Target("search")),
        ("get_user_details", {"user_id": "x"}, None),
    ],
)
def test_prune_classifies_calls(name: str, arguments: dict[str, Any], expected: object) -> None:
    assert classify(ToolCall("c", name, json.dumps(arguments))) == expected


def test_prune_reads_tool_output_without_wrapper() -> None:
    call = ToolCall("c1", "read_file", json.dumps({"path": "a.py"}))
    history = make(
        "task", (AssistantMessage(None, tool_calls=(call,)), ToolMessage("x = 1\n\n\ny = 2", "c1"))
    )
    (text,) = tool_texts(render(PruneStrategy(), history))
    assert text == "x = 1\ny = 2\n[prune: 2 blank lines dropped]"


# --- recall ----------------------------------------------------------------------------------


def recall_history(n: int = 8) -> History:
    steps: list[Sequence[Message] | str] = ["task"]
    for i in range(1, n + 1):
        out = "\n".join(f"line {j} of output {i} word{i}" for j in range(40)) + "\n"
        steps.append(bash(i, f"cat f{i}.txt", out))
    return make(*steps)


def test_recall_archives_oldest_outputs_past_the_trigger() -> None:
    history = recall_history()
    strategy = RecallStrategy(RecallConfig(budget=2000))
    full = render(FullStrategy(), history)
    assert full.total_tokens > 0.75 * 2000
    view = render(strategy, history)
    assert view.total_tokens <= 0.5 * 2000
    archived = list(strategy.archived)
    assert archived == list(range(1, len(archived) + 1)) and 8 not in archived
    texts = tool_texts(view)
    for step in archived:
        assert texts[step - 1] == STUB.format(step=step)
        assert texts[step - 1] == (
            f"[output of step {step} moved to the archive as #{step}; call recall(id={step}) "
            "to see it, or recall(query=...) to search]"
        )
    assert [str(e.restore) for e in view.elisions] == [f"recall(id={s})" for s in archived]
    assert {e.reason for e in view.elisions} == {"recall"} and view.unrecoverable_tokens == 0


def test_recall_below_the_trigger_changes_nothing_and_budget_argument_wins() -> None:
    history = recall_history(2)
    assert render(RecallStrategy(), history).elisions == ()  # default budget 32000
    assert render(RecallStrategy(), history, budget=100).elisions != ()


def test_recall_is_monotonic_and_prefix_stable() -> None:
    full = recall_history(12)
    strategy = RecallStrategy(RecallConfig(budget=3000))
    history = History(full.system)
    previous: View | None = None
    archived: list[int] = []
    for step in full:
        view = render(strategy, history)
        assert list(strategy.archived)[: len(archived)] == archived  # archived stays archived
        if previous is not None and list(strategy.archived) == archived:
            assert view.messages[: len(previous.messages)] == previous.messages
        archived, previous = list(strategy.archived), view
        history.append_step(step)
        strategy.observe(step, history)
    assert archived


def test_recall_tool_returns_verbatim_output_and_searches_the_archive() -> None:
    history = recall_history()
    strategy = RecallStrategy(RecallConfig(budget=2000))
    render(strategy, history)
    assert isinstance(strategy, ToolProvider)
    (tool,) = strategy.tools()
    assert tool["function"]["name"] == "recall"
    assert set(tool["function"]["parameters"]["properties"]) == {"id", "query"}
    assert strategy.call_tool("recall", {"id": 2}, history) == history[2].messages[1].content
    found = strategy.call_tool("recall", {"query": "WORD2"}, history)
    assert found == (
        "#2: 40 matching lines\n  3: line 0 of output 2 word2\n"
        "  4: line 1 of output 2 word2\n  5: line 2 of output 2 word2"
    )
    assert "#1" not in found
    assert strategy.call_tool("recall", {"query": "word8"}, history).startswith("no archived")


@pytest.mark.parametrize(
    ("name", "arguments", "needle"),
    [
        ("recall", {}, "exactly one of"),
        ("recall", {"id": 1, "query": "x"}, "exactly one of"),
        ("recall", {"id": "two"}, "must be an integer"),
        ("recall", {"id": True}, "must be an integer"),
        ("recall", {"id": 99}, "there is no #99"),
        ("recall", {"id": 0}, "no tool output"),
        ("recall", {"query": "  "}, "words to look for"),
        ("recall", {"query": 5}, "words to look for"),
        ("recall", {"ids": 5}, "unknown arguments ['ids']"),
        ("restore", {"id": 1}, "unknown tool 'restore'"),
    ],
)
def test_recall_bad_arguments_give_errors(name: str, arguments: Any, needle: str) -> None:
    history = recall_history()
    strategy = RecallStrategy(RecallConfig(budget=2000))
    render(strategy, history)
    answer = strategy.call_tool(name, arguments, history)
    assert answer.startswith("error:") and needle in answer


def test_recall_archive_is_per_history() -> None:
    strategy = RecallStrategy(RecallConfig(budget=2000))
    first = recall_history()
    render(strategy, first)
    assert strategy.archived
    other = recall_history(1)
    assert render(strategy, other).elisions == () and not strategy.archived
    assert strategy.call_tool("recall", {"query": "word1"}, other) == "nothing is archived yet"


# --- chain -----------------------------------------------------------------------------------


class Recorder(TransformStrategy):
    """A transform that records what it sees (for chain tests)."""

    Config = WindowConfig

    def __init__(self, config: WindowConfig | None = None) -> None:
        super().__init__()
        self.name = "recorder"
        self.observed: list[int] = []
        self.applied: list[View] = []

    def observe(self, step: Step, history: History) -> None:
        self.observed.append(step.index)

    def apply(self, view: View, history: History, budget: int | None) -> View:
        self.applied.append(view)
        return view


def long_history() -> History:
    return make(*["task"], *[bash(i, f"cat f{i}", f"{i}" * 3000) for i in range(1, 5)])


def test_chain_applies_members_in_order() -> None:
    history = long_history()
    chain = build_strategy({"type": "chain", "strategies": ["clip", "mask keep=1"]})
    assert isinstance(chain, ChainStrategy) and chain.name == "chain"
    view = render(chain, history)
    clip, mask = ClipStrategy(), MaskStrategy(MaskConfig(keep=1))
    expected = mask.apply(clip.render(history, None), history, None)
    assert view.messages == expected.messages and view.elisions == expected.elisions
    assert view.strategy == "chain"
    texts = tool_texts(view)
    assert texts[:3] == [f"[output of step {i} omitted]" for i in (1, 2, 3)]
    assert "characters clipped" in texts[3]
    assert [e.reason for e in view.elisions] == ["clip"] * 4 + ["mask"] * 3


def test_chain_observes_and_forwards_tools() -> None:
    history = long_history()
    chain = build_strategy(
        {"type": "chain", "strategies": ["tests.test_baselines:Recorder", "recall budget=2000"]}
    )
    assert isinstance(chain, ChainStrategy)
    recorder = chain.members[0]
    assert isinstance(recorder, Recorder)
    for step in history:
        chain.observe(step, history)
    assert recorder.observed == [0, 1, 2, 3, 4]
    render(chain, history)
    assert len(recorder.applied) == 1
    assert [t["function"]["name"] for t in chain.tools()] == ["recall"]
    assert chain.call_tool("recall", {"id": 1}, history) == history[1].messages[1].content
    assert chain.call_tool("nope", {}, history).startswith("error: unknown tool 'nope'")


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ({"type": "chain", "strategies": ["full"]}, "chain member 'full'"),
        ({"type": "chain", "strategies": ["recall", "recall"]}, "tool named 'recall'"),
        ({"type": "chain", "strategies": []}, "at least 1 item"),
        ({"type": "chain", "strategies": ["clip colour=red"]}, "clip: colour: unknown"),
        ("chain strategies=full", "must be a valid list"),
        ("window color=red", "window: color: unknown option"),
        ("clip max_chars=0", "clip: max_chars: must be >= 1, got 0"),
        ("prune per_file=0", "prune: per_file: must be >= 1, got 0"),
        ("recall trigger=2", "recall: trigger: must be <= 1"),
        ("recall size=3", "recall: size: unknown option"),
    ],
)
def test_config_errors(spec: Any, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        build_strategy(spec)


def test_short_names_build() -> None:
    for name, cls in [
        ("window", WindowStrategy),
        ("clip", ClipStrategy),
        ("prune", PruneStrategy),
        ("recall", RecallStrategy),
    ]:
        strategy = build_strategy(name)
        assert isinstance(strategy, cls) and strategy.name == name
    assert ClipStrategy().config == ClipConfig(max_chars=1000)
    default_chain = build_strategy("chain")
    assert isinstance(default_chain, ChainStrategy)
    assert [m.name for m in default_chain.members] == ["clip", "mask"]


# --- every baseline keeps every view valid ---------------------------------------------------

SPECS: list[Any] = [
    "window",
    "window keep=0",
    "window keep=3",
    "clip",
    "clip max_chars=5",
    "clip max_chars=1 head_share=0",
    "prune",
    "prune per_file=1 max_matches=2 import_lines=1",
    "recall",
    "recall budget=60 trigger=0.3 target=0.1",
    "recall budget=1 keep=0",
    {"type": "chain", "strategies": ["clip max_chars=8", "window keep=2", "recall budget=40"]},
    {"type": "chain", "strategies": ["prune per_file=1", "mask keep=1", "clip max_chars=3"]},
]

LINES = [
    "",
    "# c",
    "import os",
    "from a import (",
    "  b,",
    ")",
    "a.py:3:x",
    "a.py-4-y",
    "--",
    "/* license",
    " * x",
    "*/",
    "12\tcode",
    "x = 1",
    "find/me.py",
    "\\",
    "<output>",
]
COMMANDS = [
    "cat a.py",
    "nl -ba a.c",
    "grep -rn x .",
    "grep -n -A1 x a.py",
    "find . -name x",
    "sed -n '3,9p' a.sh",
    "python t.py",
    "cat <<'EOF'",
    "head 'unclosed",
]


@st.composite
def bash_histories(draw: st.DrawFn) -> History:
    """Histories of shell reads and searches with outputs made of tricky lines."""
    history = History(draw(st.none() | st.just(SystemMessage("sys"))))
    for i in range(draw(st.integers(0, 12))):
        if draw(st.booleans()):
            history.append(UserMessage(f"user {i}"))
            continue
        body = "\n".join(draw(st.lists(st.sampled_from(LINES), max_size=14)))
        wrap = draw(st.sampled_from(["{}", "<returncode>0</returncode>\n<output>\n{}</output>"]))
        history.append(*bash(i, draw(st.sampled_from(COMMANDS)), wrap.format(body)))
    return history


@settings(max_examples=60, deadline=None)
@given(st.one_of(histories(max_steps=20), bash_histories()))
def test_every_baseline_view_is_valid(history: History) -> None:
    for spec in SPECS:
        strategy = build_strategy(spec)
        replayed = History(history.system, counter=history.counter)
        for step in history:
            render(strategy, replayed, None)
            render(strategy, replayed, 50)
            replayed.append_step(step)
            strategy.observe(step, replayed)
        view = render(strategy, replayed)
        assert view.removed_tokens >= 0


@settings(max_examples=40, deadline=None)
@given(st.one_of(histories(max_steps=15), bash_histories()))
def test_clip_and_prune_only_append(history: History) -> None:
    """Per-output rules give the same message for an output at every render: the view of a
    longer history extends the view of a shorter one (the prefix cache keeps hitting)."""
    for spec in ("clip max_chars=5", "prune per_file=1 max_matches=2"):
        strategy = build_strategy(spec)
        replayed = History(history.system, counter=history.counter)
        previous = render(strategy, replayed)
        for step in history:
            replayed.append_step(step)
            view = render(strategy, replayed)
            assert view.messages[: len(previous.messages)] == previous.messages
            previous = view
