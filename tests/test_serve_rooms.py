"""serve's rooms: the shared machinery never imports an API package (only the composition root
does: ``app``, ``build``, ``runner``), and each API package imports from serve only its own
modules and the named surface (:data:`~contextfold.serve.apis.SURFACE`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextfold.serve.apis import APIS, SURFACE
from tests._imports import imports

SERVE = Path(__file__).resolve().parents[1] / "src" / "contextfold" / "serve"
ROOT_OF_COMPOSITION = {"__init__.py", "app.py", "build.py", "runner.py"}


def _imports(path: Path) -> set[str]:
    """What ``path`` imports from contextfold.serve."""
    return {m for m in imports(path) if m.startswith("contextfold.serve")}


def _shared() -> list[Path]:
    files = [p for p in SERVE.rglob("*.py") if "apis" not in p.relative_to(SERVE).parts]
    return [p for p in files if p.relative_to(SERVE).as_posix() not in ROOT_OF_COMPOSITION]


@pytest.mark.parametrize("path", _shared(), ids=lambda p: p.relative_to(SERVE).as_posix())
def test_shared_machinery_imports_no_api_package(path: Path) -> None:
    upward = {m for m in _imports(path) if m.startswith("contextfold.serve.apis")}
    assert not upward, f"{path.relative_to(SERVE)} imports {sorted(upward)}"


@pytest.mark.parametrize("api", list(APIS))
def test_an_api_package_imports_only_its_own_and_the_surface(api: str) -> None:
    own = f"contextfold.serve.apis.{api}"
    for path in (SERVE / "apis" / api).rglob("*.py"):
        foreign = {m for m in _imports(path) if m != own and not m.startswith(own + ".")} - set(
            SURFACE
        )
        assert not foreign, f"{path.relative_to(SERVE)} imports {sorted(foreign)}"


def test_the_surface_is_small_and_every_module_of_it_exists() -> None:
    assert len(SURFACE) <= 20
    for module in SURFACE:
        assert (SERVE.parent / Path(*module.split(".")[1:])).with_suffix(".py").exists(), module
    assert len([p for p in SERVE.glob("*.py")]) <= 8  # the root: composition and shared types
