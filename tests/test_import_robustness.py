"""Importers under hostile input: one bad file is skipped and counted, never a crash."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextfold.core.errors import ImportFormatError
from contextfold.importers import Trajectory, iter_trajectories
from tests.test_importers import call, miniswe, msg, result, tau2_file, write

GOOD_SESSION = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": "hello"},
]


def _read_all(paths: list[Path]) -> list[Trajectory | ImportFormatError]:
    return list(iter_trajectories(paths))


def test_a_deeply_nested_file_is_skipped_and_the_batch_goes_on(tmp_path: Path) -> None:
    write(tmp_path / "a.jsonl", json.dumps(GOOD_SESSION) + "\n")
    write(tmp_path / "b.json", '{"messages": ' + "[" * 100_000 + "]" * 100_000 + "}")
    write(tmp_path / "c.jsonl", json.dumps(GOOD_SESSION) + "\n")
    items = _read_all([tmp_path])
    assert [type(i).__name__ for i in items] == ["Trajectory", "ImportFormatError", "Trajectory"]
    error = items[1]
    assert isinstance(error, ImportFormatError)
    assert error.path.endswith("b.json") and "RecursionError" in error.problem


def test_an_importer_that_crashes_on_one_file_does_not_stop_the_batch(tmp_path: Path) -> None:
    # a JSONL line nested too deep fails inside the JSONL reader, not in the JSON detection
    write(tmp_path / "a.jsonl", "[" * 100_000 + "]" * 100_000 + "\n")
    write(tmp_path / "b.jsonl", json.dumps(GOOD_SESSION) + "\n")
    items = _read_all([tmp_path])
    assert isinstance(items[0], ImportFormatError) and items[0].path.endswith("a.jsonl")
    assert isinstance(items[1], Trajectory)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_named_json_is_skipped_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.json")
    write(tmp_path / "z.jsonl", json.dumps(GOOD_SESSION) + "\n")
    out: list[list[Trajectory | ImportFormatError]] = []
    worker = threading.Thread(target=lambda: out.append(_read_all([tmp_path])), daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "reading a FIFO blocked the batch"
    [items] = out
    assert isinstance(items[0], ImportFormatError) and "not a regular file" in items[0].problem
    assert isinstance(items[1], Trajectory)


# --- fuzzing ----------------------------------------------------------------------------------

_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20)
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                ["role", "content", "messages", "traj", "tool_calls", "id", "name", "reward"]
            )
            | st.text(max_size=8),
            inner,
            max_size=5,
        )
    ),
    max_leaves=20,
)


def _tau2() -> Any:
    return tau2_file(
        [[msg("assistant", None, tool_calls=[call("c1", "get", {})]), result("c1", "{}")]]
    )


def _taubench() -> Any:
    return [{"task_id": 1, "reward": 1.0, "info": {}, "traj": GOOD_SESSION}]


SEEDS: dict[str, Any] = {
    "tau2.json": _tau2(),
    "hist.json": _taubench(),
    "x.traj.json": miniswe(),
    "runs.jsonl": {"messages": GOOD_SESSION, "id": "a", "outcome": 1},
}


def _mutate(data: Any, path: list[Any], value: Any) -> Any:
    """``data`` with the element reached by following ``path`` (indices taken modulo each
    container's size) replaced by ``value``."""
    if not path or not isinstance(data, dict | list) or not data:
        return value
    if isinstance(data, dict):
        key = list(data)[path[0] % len(data)] if isinstance(path[0], int) else path[0]
        return {**data, key: _mutate(data.get(key), path[1:], value)}
    index = path[0] % len(data) if isinstance(path[0], int) else 0
    return [*data[:index], _mutate(data[index], path[1:], value), *data[index + 1 :]]


def _text(name: str, data: Any) -> str:
    if name.endswith(".jsonl"):
        return json.dumps(data) + "\n"
    return json.dumps(data)


def _check(tmp: Path, name: str, text: str | bytes) -> None:
    path = tmp / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    for item in iter_trajectories([path, tmp]):  # explicitly and found in a folder
        assert isinstance(item, Trajectory | ImportFormatError)
        if isinstance(item, ImportFormatError):
            assert str(path) in str(item)
    path.unlink()


FUZZ = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@FUZZ
@given(
    name=st.sampled_from(sorted(SEEDS)),
    path=st.lists(st.integers(0, 9) | st.text(max_size=6), max_size=6),
    value=_json,
)
def test_mutated_files_of_every_format_never_raise(
    tmp_path: Path, name: str, path: list[Any], value: Any
) -> None:
    _check(tmp_path, name, _text(name, _mutate(SEEDS[name], path, value)))


@FUZZ
@given(
    name=st.sampled_from(sorted(SEEDS)),
    cut=st.integers(0, 10_000),
    junk=st.binary(max_size=20),
)
def test_truncated_and_corrupted_files_never_raise(
    tmp_path: Path, name: str, cut: int, junk: bytes
) -> None:
    text = _text(name, SEEDS[name]).encode()
    _check(tmp_path, name, text[: cut % (len(text) + 1)] + junk)


@FUZZ
@given(name=st.sampled_from(sorted(SEEDS)), data=_json)
def test_random_json_never_raises(tmp_path: Path, name: str, data: Any) -> None:
    _check(tmp_path, name, _text(name, data))
