"""The test tiers: a test needing a missing component is skipped with the reason (or fails under
``CONTEXTFOLD_TEST_ALL=1``), a fixture that starts a component marks the tests that use it, and
``-m`` deselects by those markers (``slow`` too, for a fixture slow to start). Run in inner
pytest sessions with a component that is never here."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import _components
from tests._components import COMPONENTS, REQUIRE_ALL, Component

INNER_CONFTEST = """
import pytest
from tests.conftest import pytest_collection_modifyitems, pytest_runtest_setup

@pytest.fixture
def ghost_server():
    yield "boo"
"""

INNER_TESTS = """
import pytest

def test_uses_the_fixture(ghost_server):
    pass

@pytest.mark.ghost
def test_marked():
    pass

def test_plain():
    pass
"""


@pytest.fixture
def inner(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.Pytester]:
    """An inner session whose ``ghost`` component is missing; ``ghost_server`` starts it."""
    monkeypatch.setitem(COMPONENTS, "ghost", Component("a ghost", "summon one", lambda: "gone"))
    monkeypatch.setitem(_components.FIXTURES, "ghost_server", ("ghost", "slow"))
    monkeypatch.delenv(REQUIRE_ALL, raising=False)
    pytester.makeini("[pytest]\nmarkers =\n    ghost: a component never here\n    slow: slow\n")
    pytester.makeconftest(INNER_CONFTEST)
    pytester.makepyfile(test_inner=INNER_TESTS)
    yield pytester
    _components._absent.cache_clear()


def test_a_missing_component_skips_with_the_reason(inner: pytest.Pytester) -> None:
    result = inner.runpytest("-rs")
    result.assert_outcomes(passed=1, skipped=2)
    result.stdout.fnmatch_lines(["SKIPPED [[]2] *: needs a ghost: gone; install: summon one"])


def test_under_test_all_a_missing_component_fails(
    inner: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(REQUIRE_ALL, "1")
    result = inner.runpytest()
    result.assert_outcomes(passed=1, errors=2)
    result.stdout.fnmatch_lines([f"*needs a ghost: gone*{REQUIRE_ALL}=1*"])


def test_the_fixture_marks_its_tests_before_m_deselects(inner: pytest.Pytester) -> None:
    inner.runpytest("-m", "not ghost").assert_outcomes(passed=1, deselected=2)
    inner.runpytest("-m", "not slow").assert_outcomes(passed=1, skipped=1, deselected=1)


def test_an_npm_test_names_the_command_it_lacks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(COMPONENTS, "npm", Component("Node.js and npm", "apt", lambda: None))
    _components._absent.cache_clear()
    problem = _components.missing("npm", ("no-such-agent-cli",))
    assert problem is not None and "no-such-agent-cli not installed" in problem
    assert _components.missing("npm") is None
    _components._absent.cache_clear()


def test_every_tier_marker_is_registered(pytestconfig: pytest.Config) -> None:
    registered = {line.split(":")[0].split("(")[0] for line in pytestconfig.getini("markers")}
    assert {*COMPONENTS, "slow"} <= registered
