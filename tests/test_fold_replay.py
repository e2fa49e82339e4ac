"""Replay of model-driven strategies: the fold keys, --folder, --limit, the fold cache, and a
folder behind a real OpenAI-compatible HTTP server on the loopback address."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from contextfold.bench.replay import SUMMARY_KEYS, replay
from contextfold.cli import app
from contextfold.core.messages import from_openai
from contextfold.core.meter import PRICE_TABLES, get_profile
from contextfold.core.tokens import ApproxCounter
from contextfold.importers import iter_trajectories
from contextfold.models.registry import extractive_reply
from contextfold.strategies.folding import FolderSource

FOLDING = ["compact", "summary threshold=300", "resum", "iterresearch"]
runner = CliRunner()


def _session(n: int, seed: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": f"Fix issue {seed} in the parser."},
    ]
    for i in range(n):
        call = {"id": f"c{i}", "type": "function"}
        call["function"] = {"name": "bash", "arguments": json.dumps({"cmd": f"cat src/m{i}.py"})}
        messages.append({"role": "assistant", "content": f"Reading m{i}.py", "tool_calls": [call]})
        body = "\n".join(f"def f{i}_{k}(x): return x + {k}  # line {k}" for k in range(30))
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": body})
    messages.append({"role": "assistant", "content": "Fixed."})
    return messages


def _write(path: Path, sessions: int = 2, steps: int = 10) -> Path:
    lines = [json.dumps({"id": f"s{k}", "messages": _session(steps, k)}) for k in range(sessions)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_every_folding_strategy_folds_in_replay_and_full_does_not(tmp_path: Path) -> None:
    path = _write(tmp_path / "runs.jsonl")
    result = replay(
        iter_trajectories([path]),
        ["full", *FOLDING],
        counter=ApproxCounter(),
        profile=get_profile("qwen3-8b"),
        prices=PRICE_TABLES["default"],
        budget=2000,
        folders=FolderSource(default="scripted"),
    )
    summaries = {label: res.summary() for label, res in result.strategies.items()}
    assert all(tuple(s) == SUMMARY_KEYS for s in summaries.values())
    full = summaries.pop("full")
    assert full["fold_calls"] == full["fold_cost_usd"] == 0
    assert full["total_cost_usd"] == full["cost_usd"]
    for label, s in summaries.items():
        assert s["fold_calls"] > 0 and s["fold_prompt_tokens"] > 0, label
        assert s["fold_cost_usd"] > 0 and s["total_cost_usd"] > s["cost_usd"], label
        assert s["prompt_tokens"] < full["prompt_tokens"], label
        assert s["unrecoverable_tokens"] == 0 and s["removed_tokens"] > 0, label


# --------------------------------------------------------------------------- a real server


class FolderServer:
    """An OpenAI-compatible ``/chat/completions`` that folds extractively (a deterministic
    stand-in for a model on vLLM or llama.cpp): it answers the ``response_format`` schema it
    is sent, or refuses ``response_format`` with a 400 when ``refuse_schema`` is set."""

    def __init__(self, *, refuse_schema: bool = False) -> None:
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                status, reply = server.answer(body, refuse_schema)
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def answer(self, body: dict[str, Any], refuse: bool) -> tuple[int, dict[str, Any]]:
        wanted = body.get("response_format")
        if refuse and wanted is not None:
            return 400, {"error": {"message": "response_format is not supported", "code": 400}}
        schema = wanted["json_schema"]["schema"] if wanted else {"properties": {"summary": {}}}
        messages = [from_openai(m) for m in body["messages"]]
        text = extractive_reply(messages, schema)
        usage = {"prompt_tokens": 50 * len(messages), "completion_tokens": len(text) // 4}
        choice = {"index": 0, "finish_reason": "stop"}
        choice["message"] = {"role": "assistant", "content": text}
        reply = {"id": "x", "object": "chat.completion", "created": 1, "model": body["model"]}
        return 200, {**reply, "choices": [choice], "usage": usage}


@pytest.fixture
def folder_server(request: pytest.FixtureRequest) -> Iterator[FolderServer]:
    server = FolderServer(refuse_schema=getattr(request, "param", False))
    thread = threading.Thread(target=server.httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def _replay_cli(path: Path, out: Path, server: FolderServer, *extra: str) -> dict[str, Any]:
    args = ["replay", str(path), "--tokenizer", "approx", "--budget", "2000", "--json", str(out)]
    args += ["--folder", "openai:folder-model", "--base-url", server.url, "--limit", "1"]
    for spec in ["full", *FOLDING]:
        args += ["-s", spec]
    res = runner.invoke(app, [*args, *extra])
    assert res.exit_code == 0, res.output
    data: dict[str, Any] = json.loads(out.read_text())
    return data


def test_replay_against_an_openai_compatible_server_then_from_the_fold_cache(
    folder_server: FolderServer, tmp_path: Path
) -> None:
    path = _write(tmp_path / "runs.jsonl", sessions=3)
    cache = ["--fold-cache", str(tmp_path / "folds.sqlite")]
    first = _replay_cli(path, tmp_path / "a.json", folder_server, *cache)
    asked = len(folder_server.requests)
    assert asked > 0 and all("response_format" in r for r in folder_server.requests)
    for spec in FOLDING:
        assert first[spec]["trajectories"] == 1  # --limit 1
        assert first[spec]["fold_calls"] > 0 and first[spec]["fold_cache_hits"] == 0
    second = _replay_cli(path, tmp_path / "b.json", folder_server, *cache)
    assert len(folder_server.requests) == asked  # every fold came from the cache
    for spec in FOLDING:
        assert second[spec]["fold_cache_hits"] == second[spec]["fold_calls"] > 0
        for key in ("prompt_tokens", "cost_usd", "fold_calls", "fold_cost_usd", "total_cost_usd"):
            assert second[spec][key] == first[spec][key], (spec, key)


@pytest.mark.parametrize("folder_server", [True], indirect=True)
def test_a_server_that_refuses_response_format_is_asked_without_it(
    folder_server: FolderServer, tmp_path: Path
) -> None:
    path = _write(tmp_path / "runs.jsonl", sessions=1)
    data = _replay_cli(path, tmp_path / "a.json", folder_server, "--no-fold-cache")
    refused = [r for r in folder_server.requests if "response_format" in r]
    assert len(refused) == 1  # asked once with it, never again
    assert data["compact"]["fold_calls"] > 0 and data["compact"]["fold_rejected"] == 0


def test_a_folding_strategy_without_a_folder_fails_before_any_work(tmp_path: Path) -> None:
    path = _write(tmp_path / "runs.jsonl", sessions=1)
    res = runner.invoke(app, ["replay", str(path), "-s", "compact", "--no-fold-cache"])
    assert res.exit_code == 2
    assert "folds with a model but has no folder" in res.output and "--folder" in res.output
