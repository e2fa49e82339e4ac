"""refold leaves the agent's own bulk out of settled steps (strategies/refold/own.py): its thinking
and its long tool inputs, each back with restore(step=N, part='thinking' | 'calls')."""

from __future__ import annotations

import json

from contextfold.bench.replay import replay
from contextfold.core.driver import Driver
from contextfold.core.history import History
from contextfold.core.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.core.meter import PRICE_TABLES, get_profile
from contextfold.core.parts import Part
from contextfold.core.pipeline import render_checked
from contextfold.core.tokens import ApproxCounter
from contextfold.core.view import View
from contextfold.importers.base import Trajectory
from contextfold.strategies.refold import RefoldStrategy
from contextfold.strategies.registry import build_strategy

THINKING = "I should look at module {i} next, since the parser hands its tokens there. " * 8
BODY = "def handler_{i}(event):\n    return process(event)\n" * 20


def steps(n: int = 12) -> list[tuple[AssistantMessage | UserMessage | ToolMessage, ...]]:
    """A user message, then agent steps that think at length, read a file (a small output) or
    write one (a long body), and every fourth one runs a long shell command."""
    out: list[tuple[AssistantMessage | UserMessage | ToolMessage, ...]] = [
        (UserMessage("Fix the event handlers."),)
    ]
    for i in range(1, n):
        if i % 4 == 0:
            args = {"command": "python - <<'EOF'\n" + BODY.format(i=i) + "EOF"}
            call = ToolCall(f"c{i}", "Bash", json.dumps(args))
        elif i % 2:
            call = ToolCall(f"c{i}", "Read", json.dumps({"file_path": f"src/m{i}.py"}))
        else:
            args = {"file_path": f"src/m{i}.py", "content": BODY.format(i=i)}
            call = ToolCall(f"c{i}", "Write", json.dumps(args))
        message = AssistantMessage("", tool_calls=(call,), reasoning=THINKING.format(i=i))
        out.append((message, ToolMessage(f"ok {i}", f"c{i}")))
    return out


def session(n: int = 12) -> History:
    history = History(SystemMessage("You fix code."), counter=ApproxCounter())
    for messages in steps(n):
        history.append(*messages)
    return history


def refold(**config: object) -> RefoldStrategy:
    strategy = build_strategy({"type": "refold", "advance": "fixed", **config})
    assert isinstance(strategy, RefoldStrategy)
    return strategy


def shown(view: View, step: int) -> AssistantMessage:
    for message, provenance in zip(view.messages, view.provenance, strict=True):
        if isinstance(message, AssistantMessage) and provenance.steps == (step,):
            return message
    raise AssertionError(f"step {step} is not in the view")


def test_a_settled_step_leaves_its_thinking_out_and_the_latest_keeps_it() -> None:
    history = session()
    view = render_checked(refold(), history)
    assert shown(view, 1).reasoning is None
    last = len(history) - 1
    assert shown(view, last).reasoning == THINKING.format(i=last)
    thinking = {e.steps[0]: e for e in view.elisions if e.reason == "thinking"}
    assert 1 in thinking and last not in thinking
    assert str(thinking[1].restore) == "restore(step=1, part='thinking')"
    assert view.unrecoverable_tokens == 0


def test_restore_part_thinking_gives_the_thinking_back_with_what_its_parts_hold() -> None:
    history = History(SystemMessage("You fix code."), counter=ApproxCounter())
    for messages in steps():
        history.append(*messages)
    block = Part("anthropic:layout", "{}", text="a thinking block's text")
    message = AssistantMessage("", tool_calls=(ToolCall("p", "Read", "{}"),), parts=(block,))
    history.append(message, ToolMessage("ok", "p"))
    history.append(*steps(3)[1])
    driver = Driver(refold(), history)
    view = driver.prepare().view
    index = len(history) - 2
    assert shown(view, index).parts == ()  # the block travels with the latest steps only
    assert driver.answer("restore", {"step": 1, "part": "thinking"}) == THINKING.format(i=1)
    assert driver.answer("restore", {"step": index, "part": "thinking"}) == block.text


def test_a_layout_part_that_holds_no_text_stays() -> None:
    history = History(None, counter=ApproxCounter())
    layout = Part("anthropic:layout", '{"blocks": 2}')
    history.append(UserMessage("Fix it."))
    for i in range(1, 4):
        call = ToolCall(f"c{i}", "Read", json.dumps({"file_path": f"m{i}.py"}))
        message = AssistantMessage("ok", tool_calls=(call,), parts=(layout,))
        history.append(message, ToolMessage("x " * 200, f"c{i}"))
    view = render_checked(refold(), history)
    assert shown(view, 1).parts == (layout,)
    assert not [e for e in view.elisions if e.reason == "thinking"]


def test_long_inputs_of_a_settled_step_are_left_out_and_a_shell_command_stays() -> None:
    history = session()
    view = render_checked(refold(keep_thinking=True), history)
    (write,) = shown(view, 2).tool_calls
    args = json.loads(write.arguments)
    size = len(BODY.format(i=2))
    assert args == {
        "file_path": "src/m2.py",
        "content": f"[{size:,} characters left out: restore(step=2, part='calls') shows them]",
    }
    assert shown(view, 1).tool_calls == history[1].message.tool_calls  # short: as it was
    assert shown(view, 4).tool_calls == history[4].message.tool_calls  # a shell command
    inputs = [e for e in view.elisions if e.reason == "input"]
    assert {e.steps[0] for e in inputs} == {2, 6, 10} - {len(history) - 1}
    calls = Driver(refold(), history).answer("restore", {"step": 2, "part": "calls"})
    assert calls == f"Write({history[2].message.tool_calls[0].arguments})"


def test_keep_thinking_and_inputs_zero_keep_the_agents_bulk() -> None:
    history = session()
    view = render_checked(refold(keep_thinking=True, inputs=0), history)
    assert shown(view, 2) == history[2].message
    assert not [e for e in view.elisions if e.reason in ("thinking", "input")]


def trajectory() -> Trajectory:
    return Trajectory("own", "test", SystemMessage("You fix code."), tuple(steps(40)))


def test_the_agents_bulk_pays_for_the_first_advance_and_risks_no_restore() -> None:
    """Its outputs are too small to stub, so with its bulk kept refold never advances (notes
    never make the first advance); leaving the bulk out pays, and no restore is made."""
    specs = ["full", "refold", "refold keep_thinking=true inputs=0"]
    result = replay(
        [trajectory()],
        specs,
        counter=ApproxCounter(),
        profile=get_profile("qwen3-8b"),
        prices=PRICE_TABLES["default"],
    )
    rows = {label: res.rows[0] for label, res in result.strategies.items()}
    full, own, kept = rows["full"], rows["refold"], rows["refold keep_thinking=true inputs=0"]
    assert kept["prompt_tokens"] == full["prompt_tokens"]
    assert own["prompt_tokens"] < 0.7 * full["prompt_tokens"]
    assert own["cost_usd"] < full["cost_usd"]
    assert own["restores"] == own["reruns"] == 0
