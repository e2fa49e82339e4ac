"""The public API is explicit and light: ``__all__`` lists what a user needs, each name exists,
nothing else public hides in the package, and importing it loads no heavy library."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

import contextfold

HEAVY = ("numpy", "gguf", "llama_cpp")


def test_all_names_exist() -> None:
    for name in contextfold.__all__:
        assert hasattr(contextfold, name), name


def test_all_is_complete() -> None:
    for name in contextfold.__all__:
        getattr(contextfold, name)  # every lazily loaded name is now in the module
    public = {n for n in vars(contextfold) if not n.startswith("_")} - {"annotations"}
    modules = {m.name for m in pkgutil.iter_modules(contextfold.__path__)}
    assert public - modules - set(contextfold.__all__) == set()


def test_all_is_what_a_user_needs() -> None:
    needed = {"Session", "Prepared", "UserMessage", "AssistantMessage", "ToolMessage"}
    needed |= {"build_strategy", "STRATEGIES", "SQLiteStore", "MemoryStore", "open_store"}
    needed |= {"ContextFoldError", "ContextBudgetError", "HistoryError", "MessageFormatError"}
    assert needed <= set(contextfold.__all__) and len(contextfold.__all__) <= 40
    from contextfold.session import Session

    assert contextfold.Session is Session


def test_a_name_outside_all_says_where_the_rest_lives() -> None:
    with pytest.raises(AttributeError, match=r"'Agent'; beyond its __all__.*contextfold\.agent"):
        contextfold.Agent  # noqa: B018


def _loaded(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_import_contextfold_loads_no_numpy_gguf_or_llama_cpp() -> None:
    assert _loaded("import contextfold") == []


def test_a_session_preparing_a_view_loads_none_of_them_either() -> None:
    code = (
        "from contextfold import Session\n"
        "for spec in ('refold', 'summary folder=scripted'):\n"
        "    Session(spec, budget=1000).prepare([{'role': 'user', 'content': 'hi'}])"
    )
    assert _loaded(code) == []


def test_every_module_imports_and_declares_all() -> None:
    for info in pkgutil.walk_packages(contextfold.__path__, "contextfold."):
        module = importlib.import_module(info.name)
        if info.name.rsplit(".", 1)[-1].startswith("_") or info.ispkg:
            continue
        assert hasattr(module, "__all__") or info.name == "contextfold.cli", info.name
