"""Argument availability and the hindsight bound, on sessions written here whose answers are
known by construction."""

from __future__ import annotations

import json
from typing import Any

from contextfold.bench.availability import ARGS_KEYS, ArgIndex
from contextfold.bench.replay import SUMMARY_KEYS, ReplayResult, replay
from contextfold.bench.report import replay_table
from contextfold.core.argvalues import call_values
from contextfold.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.core.meter import PRICE_TABLES, get_profile
from contextfold.core.prepared import PreparedText, value_runs
from contextfold.core.tokens import ApproxCounter
from contextfold.core.verbatim import Leaf, found
from contextfold.importers.base import Trajectory

FILLER = "\n".join(f"catalog line {i}: nothing of note here" for i in range(60))


def call(n: int, tool: str, **args: Any) -> ToolCall:
    return ToolCall(f"c{n}", tool, json.dumps(args))


def step(n: int, tool: str, output: str, **args: Any) -> tuple[Message, ...]:
    return AssistantMessage(None, tool_calls=(call(n, tool, **args),)), ToolMessage(output, f"c{n}")


def session(fillers: int = 4) -> Trajectory:
    """Five values are learned from the context: the user id (user message), the order id
    (step 1's output), the item id and price (step 2's output). ``STORE_42`` comes from the
    system prompt and ``2024-01-01`` from nowhere: neither counts."""
    steps: list[tuple[Message, ...]] = [
        (UserMessage("Please refund the lamp for user mia_li_3668."),),
        step(1, "get_user", '{"orders": ["#W1234567", "#W7654321"]}', user_id="mia_li_3668"),
        step(2, "get_order", '{"item_id": "ITEM_998877", "price": 41.64}', order_id="#W7654321"),
    ]
    steps += [step(3 + i, "browse", FILLER, page=f"page-{i}") for i in range(fillers)]
    refund = call(9, "refund", order_id="#W7654321", item_id="ITEM_998877", amount=41.64)
    extra = call(10, "note", store="STORE_42", date="2024-01-01")
    steps.append(
        (
            AssistantMessage(None, tool_calls=(refund, extra)),
            ToolMessage("refunded", "c9"),
            ToolMessage("noted", "c10"),
        )
    )
    steps.append((AssistantMessage("Done: the lamp is refunded."),))
    system = SystemMessage("You are a store agent. Always note STORE_42 on refunds.")
    return Trajectory("t", "test", system, tuple(steps))


def run(specs: list[str], *, hindsight: bool = False) -> ReplayResult:
    return replay(
        [session()],
        specs,
        counter=ApproxCounter(),
        profile=get_profile("qwen3-8b"),
        prices=PRICE_TABLES["default"],
        hindsight=hindsight,
    )


def test_values_are_leaves_of_json_and_names_in_shell_commands() -> None:
    args = {"user_id": "mia_li_3668", "n": 3, "ok": True, "ids": ["ab", "#W1"], "price": 41.64}
    assert call_values(ToolCall("1", "lookup", json.dumps(args))) == ["mia_li_3668", "#W1", 41.64]
    command = "cd /repo && sed -n '120,180p' ./src/app/models.py | grep -n parse_args"
    values = call_values(ToolCall("2", "bash", json.dumps({"command": command})))
    assert values == ["/repo", 120, 180, "src/app/models.py", "parse_args"]


def test_an_agent_clis_shell_tool_is_read_as_a_shell_whatever_its_case() -> None:
    """Claude Code calls its shell ``Bash``, with a description beside the command: only the
    names in them are values, not the whole command or the description as strings."""
    args = {"command": "rm -rf testbed && ls src/app", "description": "Remove the testbed"}
    assert call_values(ToolCall("1", "Bash", json.dumps(args))) == ["src/app"]
    command = {"command": "cat src/app/models.py"}
    assert call_values(ToolCall("2", "run_shell_command", json.dumps(command))) == [
        "src/app/models.py"
    ]


def test_a_string_with_blanks_also_gives_the_values_inside_it() -> None:
    expression = {"expression": "652.61 - 642.72"}
    values = call_values(ToolCall("1", "calculate", json.dumps(expression)))
    assert values == ["652.61 - 642.72", 652.61, 642.72]
    note = {"reason": "exchange order #W9502127 item 1008292230, 2 of them"}
    values = call_values(ToolCall("2", "transfer", json.dumps(note)))
    assert values[1:] == ["#W9502127", 1008292230]


def test_the_index_keeps_only_values_learned_from_the_context() -> None:
    steps = session().counted_steps(ApproxCounter())
    index = ArgIndex.build(session().system, steps)
    needs = {s: [(n.value, sorted(n.steps)) for n in ns] for s, ns in index.needs.items()}
    assert needs == {
        1: [("mia_li_3668", [0])],
        2: [("#W7654321", [1])],
        7: [("#W7654321", [1]), ("ITEM_998877", [2]), (41.64, [2])],
    }


def test_full_holds_every_value_window_loses_some_reversible_mask_can_restore_them() -> None:
    result = run(["full", "window keep=2", "mask keep=1 reversible=true"])
    full, window, mask = (result.strategies[k].summary() for k in result.strategies)
    assert tuple(full)[-len(ARGS_KEYS) :] == ARGS_KEYS and tuple(full) == SUMMARY_KEYS
    assert full["args_needed"] == window["args_needed"] == mask["args_needed"] == 5
    assert (full["args_in_view"], full["args_restorable"], full["args_lost"]) == (1.0, 0.0, 0.0)
    # the window keeps the task (the user id) and the last two steps: the refund's three
    # values were in steps 1 and 2, gone without a way back
    assert (window["args_in_view"], window["args_lost"]) == (0.4, 0.6)
    assert window["args_restorable"] == 0.0
    # the reversible mask stubs steps 1 and 2 by the refund, and says how to restore them
    assert (mask["args_in_view"], mask["args_restorable"], mask["args_lost"]) == (0.4, 0.6, 0.0)
    row = result.strategies["window keep=2"].rows[0]
    assert (row["args_needed"], row["args_lost"]) == (5, 0.6)


def test_hindsight_keeps_every_needed_value_in_fewer_tokens_than_full() -> None:
    result = run(["full", "window keep=2"], hindsight=True)
    bound = result.strategies["hindsight"].summary()
    full = result.strategies["full"].summary()
    assert (bound["args_in_view"], bound["args_lost"]) == (1.0, 0.0)
    assert bound["prompt_tokens"] < full["prompt_tokens"]
    # the fillers are never needed: at the refund the bound leaves all four out
    steps = session().counted_steps(ApproxCounter())
    fillers = sum(s.total_tokens for s in steps[3:7])
    assert full["prompt_tokens"] - bound["prompt_tokens"] >= fillers
    table = replay_table(result)
    multiples = next(c for c in table.columns if c.header == "x bound")
    labels = [str(cell) for cell in table.columns[0].cells]
    cells = dict(zip(labels, (str(c) for c in multiples.cells), strict=True))
    assert cells["hindsight"] == "1.00x" and float(cells["full"].rstrip("x")) > 1


def test_a_prepared_text_finds_what_the_verbatim_rule_finds() -> None:
    cases: list[tuple[Leaf, str]] = [
        (530, "sed -n '510,530p' a.py"),  # a letter may touch a number
        (41.64, "total 41.640 USD"),
        ("HAT170", "item HAT1701"),
        ("Mei", "user mei_kovacs_8020"),
        ("Tom's", 'name "Tom\\u0027s"'),
        (248, "x1248"),
    ]
    for value, text in cases:
        assert PreparedText(text).holds(value, value_runs(value)) == found(value, text), value


def shell(n: int, command: str, output: str) -> tuple[Message, ...]:
    return step(n, "bash", output, command=command)


def coding_session() -> Trajectory:
    """The agent finds ``src/app/models.py`` in a listing (step 1), reads it whole (step 2),
    runs two long test commands (steps 3, 4) and then shows lines 120 to 180 of it (step 5):
    the path was learned from the listing, and the agent also wrote it in its own command at
    step 2. Its line numbers 120 and 180 are held by the file it read; the ``40`` of its
    ``head -n 40`` at step 3 is held by the listing, but a two-digit number proves nothing."""
    listing = "./README.md\n./src/app/models.py\n./src/app/views.py\n40 files"
    source = "\n".join(f"{i} def f{i}(): pass" for i in range(100, 200))
    return Trajectory(
        "c",
        "test",
        SystemMessage("You are a coding agent."),
        (
            (UserMessage("Fix the bug in the models."),),
            shell(1, "find . -name '*.py'", listing),
            shell(2, "cat -n src/app/models.py", source),
            shell(3, "pytest tests | head -n 40", FILLER),
            shell(4, "pytest tests -x", FILLER),
            shell(5, "sed -n '120,180p' src/app/models.py", "def f120(): pass"),
            (AssistantMessage("Done."),),
        ),
    )


def test_a_shell_number_needs_three_digits() -> None:
    values = call_values(ToolCall("1", "bash", json.dumps({"command": "head -n 40 a.py"})))
    assert values == ["a.py"]
    command = "sed -n '12,40p' a.py && sed -n '120,180p' b.py"
    values = call_values(ToolCall("2", "bash", json.dumps({"command": command})))
    assert values == ["a.py", 120, 180, "b.py"]


def test_a_shell_value_is_also_held_by_the_agents_own_earlier_command() -> None:
    steps = coding_session().counted_steps(ApproxCounter())
    index = ArgIndex.build(coding_session().system, steps)
    needs = {
        s: [(n.value, sorted(n.steps), n.commands) for n in ns] for s, ns in index.needs.items()
    }
    assert needs == {
        2: [("src/app/models.py", [1], True)],
        5: [(120, [2], True), (180, [2], True), ("src/app/models.py", [1, 2], True)],
    }


def test_the_agents_own_command_keeps_a_path_in_view_when_the_outputs_are_masked() -> None:
    result = replay(
        [coding_session()],
        ["full", "mask keep=1 reversible=true", "window keep=1"],
        counter=ApproxCounter(),
        profile=get_profile("qwen3-8b"),
        prices=PRICE_TABLES["default"],
    )
    full, mask, window = (result.strategies[k].summary() for k in result.strategies)
    assert full["args_needed"] == mask["args_needed"] == window["args_needed"] == 4
    assert full["args_in_view"] == 1.0
    # at step 5 the mask stubs the listing and the file, but step 2's command still names the
    # path: only the two line numbers need the file back
    assert (mask["args_in_view"], mask["args_restorable"], mask["args_lost"]) == (0.5, 0.5, 0.0)
    # the window keeps step 4 and the task only: at step 5 all three values are gone
    assert (window["args_in_view"], window["args_lost"]) == (0.25, 0.75)
