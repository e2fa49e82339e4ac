"""Test-wide settings: hypothesis must not fail a test because a shared machine is slow."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

# Speed is measured in benchmarks, never asserted in tests: on a loaded 2-core machine input
# generation can be slow, which is not a defect of the code under test.
settings.register_profile(
    "contextfold", suppress_health_check=[HealthCheck.too_slow], deadline=None
)
settings.load_profile("contextfold")
