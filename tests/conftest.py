"""Test-wide settings: hypothesis must not fail a test because a shared machine is slow; the
tiers (the markers of :mod:`tests._components` and ``slow``) and the shared fixtures that
start a heavy component.

``pytest -m "not slow"`` (``make test-fast``) is the core tier; a test whose component is
missing is skipped with the reason, or fails under ``CONTEXTFOLD_TEST_ALL=1`` (``make test``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from contextfold.testing.postgres import TempPostgres
from tests._components import COMPONENTS, FIXTURES, require
from tests._stores import make_store  # noqa: F401  (the store tests' fixture)

pytest_plugins = ["pytester"]  # test_tiers runs inner sessions

# Speed is measured in benchmarks, never asserted in tests: on a loaded 2-core machine input
# generation can be slow, which is not a defect of the code under test.
settings.register_profile(
    "contextfold", suppress_health_check=[HealthCheck.too_slow], deadline=None
)
settings.load_profile("contextfold")


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that uses a fixture starting a component gets that component's markers."""
    for item in items:
        for fixture in getattr(item, "fixturenames", ()):
            for marker in FIXTURES.get(fixture, ()):
                if item.get_closest_marker(marker) is None:
                    item.add_marker(marker)


def pytest_runtest_setup(item: pytest.Item) -> None:
    for name in COMPONENTS:
        mark = item.get_closest_marker(name)
        if mark is not None:
            require(name, tuple(mark.args))


@pytest.fixture(scope="session")
def postgres() -> Iterator[TempPostgres]:
    """One throwaway PostgreSQL server for the whole test session
    (:mod:`contextfold.testing.postgres`)."""
    require("postgres")
    server = TempPostgres()
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[None]:
    """One local Ray cluster with 2 workers for the whole test session (``--ray`` reuses it)."""
    require("cluster")
    import ray

    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR")
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium driven by Selenium (``benchmarks._fixtures.chrome``)."""
    require("browser")
    from benchmarks._fixtures import chrome

    with chrome() as driver:
        yield driver


@pytest.fixture(scope="session")
def smollm2_path() -> Path:
    """The embedded model's GGUF file (weights and tokenizer)."""
    require("embedded")
    from contextfold.core.gguf_tokenizer import smollm2_gguf_path

    return smollm2_gguf_path()
