"""The context-folding tutorial: safe calculator, tutorial tasks and scoring, SubtaskAgent."""

from __future__ import annotations

import math
import operator
import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from contextfold.agent import Agent
from contextfold.agent.subtasks import SubtaskAgent, parse_subtasks
from contextfold.core.errors import ConfigError
from contextfold.core.history import History
from contextfold.core.messages import Message, SystemMessage, ToolMessage, message_text
from contextfold.core.meter import Meter
from contextfold.envs.calculator import MAX_LENGTH, CalculatorEnv, CalculatorError, calculate
from contextfold.envs.calculator import evaluate as calc_eval
from contextfold.envs.tutorial import BUDGET, STUDY_PLAN, TUTORIAL_TASKS, get_task, score
from contextfold.models import LocalModel, Reply, ScriptedModel, tool_call
from contextfold.strategies.full import FullStrategy

# --------------------------------------------------------------------------- calculator

Value = int | float | str  # a str marks an expression the calculator must refuse
_NAMES = "+ add, - sub, * mul, / truediv, // floordiv, % mod, ** pow"
_OPS = {sign: getattr(operator, name) for sign, name in (p.split() for p in _NAMES.split(", "))}


def _apply(fn: Callable[..., Any], *args: Value) -> Value:
    """Python's own arithmetic, with the calculator's refusals marked."""
    if any(isinstance(a, str) for a in args):
        return "refused"
    try:
        value = fn(*args)
    except (ZeroDivisionError, OverflowError, ValueError, TypeError):
        return "refused"
    finite = not isinstance(value, float) or math.isfinite(value)
    return value if finite and abs(value) <= 10**100 else "refused"


def _binary(parts: tuple[tuple[str, Value], str, tuple[str, Value]]) -> tuple[str, Value]:
    (left, a), op, (right, b) = parts
    return f"({left} {op} {right})", _apply(_OPS[op], a, b)


def _function(parts: tuple[str, list[tuple[str, Value]]]) -> tuple[str, Value]:
    name, args = parts
    fns: dict[str, Callable[..., Any]] = {"sqrt": math.sqrt, "abs": abs, "round": round}
    fn, args = (fns[name], args[:1]) if name in fns else ({"min": min, "max": max}[name], args)
    return f"{name}({', '.join(t for t, _ in args)})", _apply(fn, *(v for _, v in args))


def _combine(kids: st.SearchStrategy[tuple[str, Value]]) -> st.SearchStrategy[tuple[str, Value]]:
    return st.one_of(
        st.tuples(kids, st.sampled_from(sorted(_OPS.keys() - {"**"})), kids).map(_binary),
        st.tuples(kids, st.just("**"), st.integers(0, 3).map(lambda k: (str(k), k))).map(_binary),
        kids.map(lambda kid: (f"(-{kid[0]})", _apply(operator.neg, kid[1]))),
        st.tuples(
            st.sampled_from(["abs", "max", "min", "round", "sqrt"]),
            st.lists(kids, min_size=1, max_size=3),
        ).map(_function),
    )


_LEAVES = st.one_of(st.integers(0, 1000), st.floats(0, 1000).map(lambda x: round(x, 3)))
EXPRESSIONS = st.recursive(_LEAVES.map(lambda v: (repr(v), v)), _combine, max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(EXPRESSIONS)
def test_calculator_agrees_with_python_arithmetic(case: tuple[str, Value]) -> None:
    text, expected = case
    assume(len(text) <= MAX_LENGTH)
    if isinstance(expected, str):
        with pytest.raises(CalculatorError):
            calc_eval(text)
        return
    assert calc_eval(text) == expected and type(calc_eval(text)) is type(expected)
    assert math.isclose(float(calculate(text)), expected, rel_tol=1e-11, abs_tol=1e-300)


READS = """\
2 + 3 * 4 => 14 | -2 ** 2 => -4 | 2 ** 3 ** 2 => 512 | 7 / 2 => 3.5 | -7 % 3 => 2
round(1500.24 * 1.0825 * 1.1, 2) => 1786.41 | sqrt(16) => 4 | 0.1 + 0.2 => 0.3
max(1, 2.5, -3) => 2.5 | 1_000 => 1000 | min(4, abs(-3)) => 3 | 7 // 2 => 3"""
REFUSALS = """\
__import__('os') => unknown function '__import__' | (1).real => attribute access
().__class__ => attribute access | x + 1 => names are not allowed ('x')
10**10**10 => too large | 9**9**9 => too large | 2 ^ 3 => write 2**3
'a' * 3 => only numbers | 1 / 0 => division by zero | [1][0] => subscripts are not allowed
1 < 2 => comparisons | sqrt(-1) => not a real number | (-8) ** 0.5 => not a real number
round(1.5, 10**9) => digits | max(1) => at least 2 | 1 + => not an arithmetic expression
True + 1 => only numbers | 1e300 => too large | open('f') => unknown function 'open'"""


def table(text: str) -> list[tuple[str, str]]:
    """``a => b | c => d`` rows as pairs."""
    cells = [c.split(" => ") for line in text.splitlines() for c in line.split(" | ")]
    return [(left.strip(), right.strip()) for left, right in cells]


@pytest.mark.parametrize(("text", "value"), table(READS))
def test_calculator_reads_arithmetic_like_python(text: str, value: str) -> None:
    assert calculate(text) == value


@pytest.mark.parametrize(
    ("text", "error"),
    [*table(REFUSALS), ("1" * (MAX_LENGTH + 1), f"the limit is {MAX_LENGTH}"), ("", "empty")],
)
def test_calculator_refuses_with_a_clear_message(text: str, error: str) -> None:
    start = time.perf_counter()
    with pytest.raises(CalculatorError) as caught:
        calculate(text)
    assert error in str(caught.value) and time.perf_counter() - start < 0.5


def calc(expression: str) -> Reply:
    return tool_call("calculator", {"expression": expression})


def test_calculator_env_is_a_tool_the_agent_loop_uses_and_counts_refusals() -> None:
    env = CalculatorEnv()
    assert [t["function"]["name"] for t in env.tools()] == ["calculator"]
    model = ScriptedModel([calc("6 * 7"), calc("os"), "42"])
    history = History(SystemMessage("sys"))
    result = Agent(model, FullStrategy(), env, history=history).run("6 times 7?")
    texts = [m.content for s in history for m in s.messages if isinstance(m, ToolMessage)]
    assert texts[0] == "42"
    assert texts[1].startswith("error: calculator failed: CalculatorError: names are not allowed")
    assert result.tool_calls == 2 and result.tool_errors == 1
    assert env.log[0] == ("6 * 7", "42") and env.log[1][1].startswith("error: ")


# --------------------------------------------------------------------------- tutorial tasks


def test_reference_answers_score_one_and_the_budget_total_is_derived() -> None:
    for task in TUTORIAL_TASKS.values():
        assert score(task, task.reference) == 1.0
    assert calculate("round((899.99 + 2*189.50 + 74.25 + 3*49) * 1.0825 * 1.10, 2)") == "1786.41"
    assert "1786.41" not in BUDGET.prompt and get_task("budget") is BUDGET
    with pytest.raises(ConfigError, match="known: budget, study-plan"):
        score("poetry", "x")


BUDGET_ANSWERS = """\
The total is $1,786.41. => 1 | Total: 1786.41 USD => 1 | 1786.41078 => 1 | $ 1786.41 => 1
The total is $1,786.40. => 0 | Total: 1786 => 0 | Subtotal 1500.24 => 0 | nothing => 0"""


@pytest.mark.parametrize(("answer", "expected"), table(BUDGET_ANSWERS))
def test_budget_scoring_checks_the_total_to_the_cent(answer: str, expected: str) -> None:
    assert score("budget", answer) == float(expected)


GOOD_PLAN = """Day 1 (4 hours): Math 2 hours, Physics 2 hours
Day 2: Math 3h and Chemistry 1h
**Day 3**: 2 hrs Physics; Chemistry - 2 hrs"""


@pytest.mark.parametrize(
    ("answer", "right"),
    [
        (GOOD_PLAN, True),
        (GOOD_PLAN.replace("Day 3", "Then"), False),
        (GOOD_PLAN.replace("Chemistry", "Chem"), False),
        (GOOD_PLAN.replace("3h", "2h"), False),
        ("Day 1: Math 5 hours\nDay 2: Physics 4 hours\nDay 3: Chemistry 3 hours", False),
        ("I will study Math, Physics and Chemistry.", False),
    ],
)
def test_study_plan_scoring_checks_days_subjects_and_hours(answer: str, right: bool) -> None:
    assert (score(STUDY_PLAN, answer) == 1.0) is right and 0.0 <= score(STUDY_PLAN, answer) <= 1


# --------------------------------------------------------------------------- SubtaskAgent

PLAN = "Here is the plan:\n1. Compute the subtotal\n2. Apply the tax and the contingency"
SUM1, SUM2 = "The subtotal is $1500.24.", "With tax and contingency the total is $1786.41."


def budget_script() -> list[Any]:
    return [
        PLAN,
        calc("899.99 + 2*189.50 + 74.25 + 3*49"),
        "Subtotal: 1500.24",
        SUM1,
        calc("1500.24 * 1.0825 * 1.10"),
        "Total: 1786.41",
        SUM2,
        "The final budget total is $1,786.41.",
    ]


def texts(messages: tuple[Message, ...]) -> str:
    return "\n".join(message_text(m) for m in messages)


def test_parse_subtasks_reads_numbered_and_bulleted_lists() -> None:
    assert parse_subtasks(PLAN) == ["Compute the subtotal", "Apply the tax and the contingency"]
    assert parse_subtasks("1) a\n**2. b**\nStep 3: c\n1.5 hours") == ["a", "b", "c"]
    assert parse_subtasks("- a\n* b") == ["a", "b"] and parse_subtasks("no list") == []
    assert parse_subtasks("1. 1.\nA\n\n2.\nB\n3) A") == ["A", "B"]  # SmolLM2's layout


def test_a_plan_cut_off_at_max_tokens_loses_its_last_item() -> None:
    plan = "1. a\n2. b\n3. " + "and so on " * 200
    model = ScriptedModel([plan, "ra", "sa", "rb", "sb", "done"])
    result = SubtaskAgent(model, CalculatorEnv()).run("t")
    assert [r.subtask for r in result.subtasks] == ["a", "b"] and result.plan == plan.strip()
    assert result.malformed == 1 and "cut off" in result.notes[0]


def test_a_full_scripted_budget_run_scores_one_and_is_metered() -> None:
    model, meter = ScriptedModel(budget_script()), Meter()
    result = SubtaskAgent(model, CalculatorEnv(), meter=meter).run(BUDGET.prompt)
    assert score(BUDGET, result.answer) == 1.0
    assert result.summaries == [SUM1, SUM2] and model.remaining == 0
    counts = result.counts()
    got = [counts[k] for k in ("subtasks", "summaries", "malformed", "tool_calls", "tool_errors")]
    assert got == [2, 2, 0, 2, 0] and counts["truncated_summaries"] == 0
    assert counts["agent_calls"] == 4 and counts["runtime_calls"] == 4
    aux = [c for c in model.calls if not c.tools]  # decomposition, two folds, synthesis
    aux_tokens = sum(
        c.completion.usage.prompt_tokens + c.completion.usage.completion_tokens for c in aux
    )
    folded = meter.fold_summary()
    folder_tokens = folded["fold_prompt_tokens"] + folded["fold_completion_tokens"]
    assert len(aux) == 4 and folder_tokens == counts["runtime_tokens"] == aux_tokens > 0
    assert len(meter.calls) == 4  # only the subtask calls are agent calls


def test_later_prompts_hold_earlier_summaries_never_earlier_tool_traffic() -> None:
    model = ScriptedModel(budget_script())
    result = SubtaskAgent(model, CalculatorEnv()).run(BUDGET.prompt)
    first = result.subtasks[0].history
    raw = [m for s in first for m in s.messages[1:] if isinstance(m, ToolMessage)]
    assert raw and raw[0].content == "1500.24"
    calls = model.calls  # plan, step, step, fold, step, step, fold, synthesis
    assert raw[0] in calls[2].messages and "899.99 + 2*189.50" in texts(calls[3].messages)
    for call in calls[4:]:  # after the first fold: its summary only
        assert not any(m in call.messages for m in raw)
        assert "899.99 + 2*189.50" not in texts(call.messages)
        assert "Subtotal: 1500.24" not in texts(call.messages)
    second = texts(calls[4].messages)
    assert SUM1 in second and "Apply the tax" in second and BUDGET.prompt in second
    synthesis = calls[7]
    assert not synthesis.tools and not any(isinstance(m, ToolMessage) for m in synthesis.messages)
    assert SUM1 in texts(synthesis.messages) and SUM2 in texts(synthesis.messages)
    assert "1500.24 * 1.0825" not in texts(synthesis.messages)
    assert "Total: 1786.41" not in texts(synthesis.messages)


def test_malformed_plans_degrade_to_one_subtask_and_are_counted() -> None:
    model = ScriptedModel(["Sure! I can help with that.", "1786.41", "Total 1786.41.", "$1,786.41"])
    result = SubtaskAgent(model, CalculatorEnv()).run(BUDGET.prompt)
    assert [r.subtask for r in result.subtasks] == [BUDGET.prompt]
    assert result.malformed == 1 and "plan: 0 usable items" in result.notes[0]
    assert score(BUDGET, result.answer) == 1.0


def test_long_plans_merge_extras_and_bad_folds_fall_back_to_the_answer() -> None:
    plan = "\n".join(f"{i}. step {i}" for i in range(1, 6))
    long = "word " * 200
    model = ScriptedModel([plan, "a1", "", "a2", long, "a3", "s3", ""])
    result = SubtaskAgent(model, CalculatorEnv(), max_subtasks=3, summary_chars=50).run("t")
    merged = "step 3; then step 4; then step 5"
    assert [r.subtask for r in result.subtasks] == ["step 1", "step 2", merged]
    assert result.summaries[0] == "a1" and len(result.summaries[1]) <= 50
    assert result.counts()["truncated_summaries"] == 1
    assert result.malformed == 3  # long plan, empty fold, empty answer
    assert result.answer == "a1\n" + result.summaries[1] + "\ns3"


def test_step_cap_and_bad_options() -> None:
    model = ScriptedModel([PLAN, calc("1"), calc("2"), "s1", "x", "s2", "done"])
    result = SubtaskAgent(model, CalculatorEnv(), steps_per_subtask=2).run("t")
    assert result.subtasks[0].stop == "max_steps" and result.subtasks[0].answer == ""
    with pytest.raises(ConfigError, match="max_subtasks >= 2"):
        SubtaskAgent(model, CalculatorEnv(), max_subtasks=1)


# --------------------------------------------------------------------------- embedded model


@pytest.mark.embedded
def test_embedded_model_calls_the_calculator_through_the_agent_loop() -> None:
    model = LocalModel(n_threads=1, n_ctx=1024, tool_choice="calculator")
    env, history = CalculatorEnv(), History(SystemMessage("Use the calculator."))
    agent = Agent(model, FullStrategy(), env, history=history, max_steps=1, max_tokens=48)
    result = agent.run("What is 12 * 7?")
    assert result.tool_calls == 1 and len(env.log) == 1
    [step] = [s for s in history if s.results]
    assert message_text(step.message).startswith("calculator(")
    assert step.results[0].content.endswith(env.log[0][1].removeprefix("error: "))
    assert len(result.meter.calls) == 1 and result.meter.calls[0].completion_tokens > 0
