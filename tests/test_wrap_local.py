"""``contextfold wrap --upstream local claude|codex|gemini``: each pinned CLI, sealed off and
offline, gets an answer from the embedded model through wrap (slow, but whole), and wrap.log
says what each call read and how long it took, and what was left out to fit the model's
window (once). Gemini CLI's settings choose API-key auth and turn folder trust on: wrap trusts
the folder it runs in."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests._clis import Tripwire, claude_env, codex_env, gemini_env
from tests._wrap import wrap_argv, wrap_env

pytestmark = [pytest.mark.slow, pytest.mark.embedded]
ASK = "Say hello"
CALL = re.compile(r"INFO contextfold serve: \S+ read [\d,]+ prompt tokens .* in [\d.]+ s")


def _wrap(work: Path, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    argv_ = wrap_argv("--upstream", "local", *argv)
    return subprocess.run(
        argv_, cwd=work, env=env, capture_output=True, text=True, timeout=400, check=False,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def _answered(run: subprocess.CompletedProcess[str], home: Path) -> str:
    """The CLI's answer, after checking the run ended well and wrap.log tells each call."""
    assert run.returncode == 0, run.stderr[-3000:]
    assert "no request was answered" not in run.stderr
    assert re.search(r"; \d+ requests?: the upstream was spared", run.stderr), run.stderr
    log = (home / ".local" / "share" / "contextfold" / "wrap.log").read_text()
    assert CALL.search(log), log
    assert log.count("were not sent (said once)") <= 1  # the tools left out: said once
    return run.stdout


@pytest.mark.npm("claude")
def test_claude_code_gets_an_answer_from_the_embedded_model(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    with Tripwire() as wire:
        env = wrap_env(claude_env(home, wire), "claude")
        run = _wrap(work, env, "claude", "-p", ASK)
    assert _answered(run, home).strip()
    assert "; 1 request: " in run.stderr


@pytest.mark.npm("codex")
def test_codex_gets_an_answer_from_the_embedded_model(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    with Tripwire() as wire:
        env = wrap_env(codex_env(home, wire, "http://127.0.0.1:9/v1", "k"), "codex")
        run = _wrap(work, env, "codex", "exec", "--skip-git-repo-check", ASK)
    assert _answered(run, home).strip()


@pytest.mark.npm("gemini")
def test_gemini_cli_gets_an_answer_in_a_folder_wrap_trusts(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    with Tripwire() as wire:
        env = wrap_env(gemini_env(home, wire, "http://127.0.0.1:9", "k"), "gemini")
        settings = {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": True}}
        (home / ".gemini" / "settings.json").write_text(json.dumps({"security": settings}))
        run = _wrap(work, env, "gemini", "-p", ASK)
    assert "Invalid auth method" not in run.stderr and "trusted directory" not in run.stderr
    assert "no auth method chosen" not in run.stderr
    assert _answered(run, home).strip()
