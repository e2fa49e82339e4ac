"""Test-wide settings: hypothesis must not fail a test because a shared machine is slow."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from contextfold.core.store.temp_postgres import INSTALL, TempPostgres, find_bin

# Speed is measured in benchmarks, never asserted in tests: on a loaded 2-core machine input
# generation can be slow, which is not a defect of the code under test.
settings.register_profile(
    "contextfold", suppress_health_check=[HealthCheck.too_slow], deadline=None
)
settings.load_profile("contextfold")


@pytest.fixture(scope="session")
def postgres() -> Iterator[TempPostgres]:
    """One throwaway PostgreSQL server for the whole test session
    (:mod:`contextfold.core.store.temp_postgres`)."""
    if find_bin() is None:
        pytest.fail(f"PostgreSQL is not installed: {INSTALL}")
    server = TempPostgres()
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[None]:
    """One local Ray cluster with 2 workers for the whole test session (``--ray`` reuses it)."""
    try:
        import ray
    except ImportError:
        pytest.fail("Ray is not installed: pip install 'contextfold[cluster]' (make setup does)")
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR")
    try:
        yield
    finally:
        ray.shutdown()
