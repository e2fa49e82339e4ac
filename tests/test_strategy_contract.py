"""Every registered strategy keeps the strategy contract of ``contextfold.core.protocols``: its
class is a ``StrategyType`` (or ``FoldingStrategyType``) whose ``Config`` is a
``StrategyConfig`` built from defaults, and its ``render`` leaves the history as it was given."""

from __future__ import annotations

import ast
import copy
import inspect
import json
from pathlib import Path
from typing import Any

import pytest

import contextfold.strategies._contract as contract
from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage, SystemMessage, ToolCall, ToolMessage
from contextfold.core.protocols import (
    Compacting,
    Folding,
    FoldingStrategyType,
    Strategy,
    StrategyConfig,
    StrategyType,
    Transform,
)
from contextfold.core.view import View
from contextfold.strategies.chain import Transform as ChainTransform
from contextfold.strategies.registry import (
    STRATEGIES,
    build_strategy,
    folds_with_model,
    strategy_class,
)

NAMES = sorted(STRATEGIES)


def _history() -> History:
    """A small coding session: reads, a rewrite, test runs, a reasoning reply; some outputs
    long enough that clipping, masking and folding strategies have something to do."""
    history = History(SystemMessage("you are a coding agent"))
    history.append({"role": "user", "content": "fix the failing test in calc.py"})
    runs = [
        ("cat calc.py", "def add(a, b):\n    return a - b\n" * 40),
        ("pytest -q", "F" * 30 + "\nFAILED test_calc.py::test_add - assert -1 == 3\n" * 20),
        ("cat calc.py", "def add(a, b):\n    return a - b\n" * 40),
        ("sed -i 's/a - b/a + b/' calc.py", ""),
        ("pytest -q", "." * 30 + "\n30 passed in 0.10s\n"),
    ]
    for i, (command, output) in enumerate(runs):
        call = ToolCall(f"c{i}", "bash", json.dumps({"command": command}))
        reply = AssistantMessage(f"step {i}: {command}", tool_calls=(call,), reasoning="think")
        history.append(reply, ToolMessage(output or "(no output)", call.id, name="bash"))
    history.append(AssistantMessage("the test passes now"))
    return history


def _state(history: History) -> dict[str, Any]:
    """Everything a render could alter: the steps (their messages, counts and hashes), the
    fold log, the system message and metadata, the messages as the model is given them."""
    return {
        "steps": list(history.steps),
        "folds": list(history.folds),
        "system": history.system,
        "meta": dict(history.meta),
        "messages": history.messages(),
        "latest_user": history.latest_user_index,
    }


def _build(name: str) -> Strategy:
    """A registered strategy from its defaults; one that folds with the scripted folder."""
    if folds_with_model(strategy_class(name)):
        return build_strategy({"type": name, "folder": "scripted"})
    return build_strategy(name)


@pytest.mark.parametrize("name", NAMES)
def test_every_class_keeps_the_declared_contract(name: str) -> None:
    cls = strategy_class(name)
    assert isinstance(cls, FoldingStrategyType if folds_with_model(cls) else StrategyType)
    assert issubclass(cls.Config, StrategyConfig)
    assert cls.Config.model_config.get("extra") == "forbid" and cls.Config.model_config["frozen"]
    config = cls.Config()  # every option has a default
    assert config.type == name
    built = cls(config, folder=_folder()) if folds_with_model(cls) else cls(config)
    assert isinstance(built, Strategy) and built.name


def _folder() -> Any:
    from contextfold.strategies.folding import FolderSource

    return FolderSource().folder("scripted", strategy="test")


def test_mypy_checks_every_registered_class_against_its_protocol() -> None:
    """``strategies/_contract.py`` puts each class in the tuple typed with its protocol; a
    class registered but left out would escape the type check."""
    tree = ast.parse(Path(inspect.getfile(contract)).read_text())
    tuples = {
        node.target.id: {e.id for e in node.value.elts if isinstance(e, ast.Name)}
        for node in ast.walk(tree)
        if isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and isinstance(node.value, ast.Tuple)
    }
    for name in NAMES:
        cls = strategy_class(name)
        typed = "BUILT_WITH_FOLDER" if folds_with_model(cls) else "BUILT_FROM_CONFIG"
        assert cls.__name__ in tuples[typed], f"{name}: {cls.__name__} not in {typed}"


@pytest.mark.parametrize("budget", [None, 400])
@pytest.mark.parametrize("name", NAMES)
def test_render_leaves_the_history_and_its_messages_as_given(name: str, budget: int | None) -> None:
    """As the loop drives it (observe each step, fold, render; compact and again when over the
    budget), a render never alters what it was given: the same step objects, equal to a deep
    copy taken before."""
    history = _history()
    strategy = _build(name)
    for step in history.steps:
        strategy.observe(step, history)
    for _ in range(2):
        if isinstance(strategy, Folding):
            strategy.fold(history, budget)
        view = _render_unchanged(strategy, history, budget)
        if budget is None or sum(view.tokens) <= budget or not isinstance(strategy, Compacting):
            break
        strategy.compact(history, budget)


def _render_unchanged(strategy: Strategy, history: History, budget: int | None) -> View:
    objects = list(history.steps)
    before = copy.deepcopy(_state(history))
    view = strategy.render(history, budget)
    assert _state(history) == before
    assert all(a is b for a, b in zip(history.steps, objects, strict=True))
    return view


def test_transform_is_declared_in_core_and_still_imported_from_chain() -> None:
    assert ChainTransform is Transform
    assert isinstance(build_strategy("clip"), Transform)
    assert not isinstance(build_strategy("summary folder=scripted"), Transform)


class _Scribbler:
    """Breaks the render contract: its render writes into the history's metadata."""

    name = "scribbler"

    def observe(self, step: Any, history: History) -> None:
        pass

    def render(self, history: History, budget: int | None) -> View:
        history.meta["seen"] = len(history.steps)
        return build_strategy("full").render(history, budget)


def test_the_render_check_catches_a_render_that_alters_the_history() -> None:
    """The check above can fail: a render that writes the history's metadata is caught."""
    with pytest.raises(AssertionError):
        _render_unchanged(_Scribbler(), _history(), None)
