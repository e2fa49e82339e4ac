"""``contextfold.testing`` holds the test doubles users test their agents with: its ``__all__``
is what it exports, and nothing else in the package imports it (the doubles are not run-time
code), so the proxy and the library ship no test server in their import graph."""

from __future__ import annotations

from pathlib import Path

import contextfold.testing
from tests._imports import imports

SRC = Path(contextfold.testing.__file__).resolve().parents[1]


def test_all_names_exist_and_nothing_else_is_public() -> None:
    for name in contextfold.testing.__all__:
        assert hasattr(contextfold.testing, name), name
    public = {n for n in vars(contextfold.testing) if not n.startswith("_")}
    assert public - {"annotations", "postgres", "upstreams"} == set(contextfold.testing.__all__)


def test_no_module_outside_testing_imports_it() -> None:
    outside = [p for p in SRC.rglob("*.py") if "testing" not in p.relative_to(SRC).parts]
    importers = [
        str(p.relative_to(SRC))
        for p in outside
        if any(
            m == "contextfold.testing" or m.startswith("contextfold.testing.") for m in imports(p)
        )
    ]
    assert importers == []
    assert not list((SRC / "serve").glob("scripted*.py"))  # no shims left behind
