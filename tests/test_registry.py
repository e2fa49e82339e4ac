from __future__ import annotations

from pathlib import Path

import pytest

from contextfold.core.errors import ConfigError
from contextfold.strategies.full import FullConfig, FullStrategy
from contextfold.strategies.registry import build_strategy


@pytest.mark.parametrize(
    "spec",
    [
        "full",
        {"type": "full"},
        "type: full",
        "{type: full}",
        "contextfold.strategies.full:FullStrategy",
        "contextfold.strategies.full.FullStrategy",
        {"type": "contextfold.strategies.full:FullStrategy"},
    ],
)
def test_every_spec_form_builds_the_strategy(spec: object) -> None:
    strategy = build_strategy(spec)  # type: ignore[arg-type]
    assert isinstance(strategy, FullStrategy)
    assert strategy.config == FullConfig()


def test_yaml_file(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("type: full\n")
    assert isinstance(build_strategy(str(path)), FullStrategy)


def test_instances_pass_through() -> None:
    s = FullStrategy()
    assert build_strategy(s) is s


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("nope", "unknown strategy 'nope'; known: "),
        ("full color=red", "full: color: unknown option; options: none"),
        ("full color", "must look like key=value"),
        ({"kind": "full"}, "has no 'type'"),
        ("missing.yaml", "does not exist"),
        ("contextfold.nothing:Thing", "cannot import strategy"),
        ("contextfold.core.errors:ConfigError", "is not a strategy class: it needs a 'Config'"),
        ("type: [unclosed", "not valid YAML"),
    ],
)
def test_bad_specs_are_named(spec: object, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        build_strategy(spec)  # type: ignore[arg-type]
