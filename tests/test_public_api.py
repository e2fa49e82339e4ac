"""The public API is explicit: ``__all__`` lists every public name, and each one exists."""

from __future__ import annotations

import importlib
import pkgutil

import contextfold


def test_all_names_exist() -> None:
    for name in contextfold.__all__:
        assert hasattr(contextfold, name), name


def test_all_is_complete() -> None:
    public = {n for n in vars(contextfold) if not n.startswith("_")} - {"annotations"}
    modules = {m.name for m in pkgutil.iter_modules(contextfold.__path__)}
    assert public - modules - set(contextfold.__all__) == set()


def test_every_module_imports_and_declares_all() -> None:
    for info in pkgutil.walk_packages(contextfold.__path__, "contextfold."):
        module = importlib.import_module(info.name)
        if info.name.rsplit(".", 1)[-1].startswith("_") or info.ispkg:
            continue
        assert hasattr(module, "__all__") or info.name == "contextfold.cli", info.name
