"""``contextfold wrap claude|codex|gemini`` with the pinned CLIs (``make npm``), sealed off and
offline: wrap starts the proxy in front of a scripted upstream of the CLI's API, the CLI does
its small coding task through it, and when it ends the proxy is gone (its port closed, nothing
left running in the work folder), the CLI's answer and exit status are the run's, and the
closing line names the store and the tokens spared. Also: a proxy already running (``--url``),
the CLI's failure passed on, and SIGINT/SIGTERM sent to wrap while the CLI waits on the model."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from contextfold.core.store import open_store
from contextfold.testing.upstreams.anthropic import AnthropicReply, ScriptedAnthropic
from contextfold.testing.upstreams.gemini import ScriptedGemini
from contextfold.testing.upstreams.responses import ScriptedResponses
from tests._clis import (
    DONE,
    GEMINI_MODEL,
    Tripwire,
    claude_env,
    claude_writes_file,
    cli,
    codex_env,
    codex_writes_file,
    gemini_env,
    gemini_result,
    gemini_writes_file,
)
from tests._protocols import TOKEN, proxy_for
from tests._wrap import port_closed, processes_in, proxy_port, wrap_argv, wrap_env

pytestmark = pytest.mark.slow
SOURCE = "def greet():\n    return 'hi'\n"
CLAUDE_ARGS = ["--permission-mode", "acceptEdits", "--output-format", "json"]
SUMMARY = r"contextfold wrap: sessions in (?P<store>.+?); (?P<n>\d+) requests?: the upstream was "
SUMMARY += r"spared -?[\d,]+ of (?P<received>[\d,]+) prompt tokens"


def _run(argv: list[str], env: dict[str, str], work: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _sessions(store: Path) -> list[str]:
    with open_store(store) as opened:
        return opened.list_sessions()


def _left_nothing(run: subprocess.CompletedProcess[str], work: Path) -> None:
    assert port_closed(proxy_port(run.stderr))
    assert processes_in(work) == []


@pytest.mark.npm("claude")
def test_wrap_runs_claude_code_through_a_proxy_it_stops(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    with ScriptedAnthropic(claude_writes_file(work / "greet.py", SOURCE)) as up, Tripwire() as wire:
        env = wrap_env(claude_env(home, wire), "claude")
        argv = wrap_argv("--upstream", f"anthropic:{up.url}", "-s", "window", "claude")
        run = _run([*argv, "-p", "Create greet.py.", *CLAUDE_ARGS], env, work)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["result"] == DONE  # the CLI's own output, untouched
    assert (work / "greet.py").read_text() == SOURCE and wire.seen == []
    summary = re.search(SUMMARY, run.stderr)
    assert summary and int(summary["n"]) == len(up.calls) >= 2
    store = home / ".local" / "share" / "contextfold" / "sessions.db"
    assert summary["store"] == str(store) and len(_sessions(store)) == 1
    offered = [{t["name"] for t in body["tools"]} for body in up.calls]
    assert all("Write" in o and "restore" not in o for o in offered)  # window's view: -s
    first = up.requests[0].headers
    assert first["x-api-key"] == "sk-ant-test" and "x-contextfold-token" not in first
    _left_nothing(run, work)


@pytest.mark.npm("codex")
def test_wrap_runs_codex_with_a_provider_given_on_its_command_line(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    with ScriptedResponses(codex_writes_file("greet.py", SOURCE)) as up, Tripwire() as wire:
        env = codex_env(home, wire, "http://127.0.0.1:9/v1", "unused")  # the user's config
        config = (home / ".codex" / "config.toml").read_text()
        env = wrap_env(env | {"OPENAI_API_KEY": "sk-test"}, "codex")
        argv = wrap_argv("--upstream", f"responses:{up.url}", "--store", str(tmp_path / "s.db"))
        codex = ["codex", "exec", "--skip-git-repo-check", "--sandbox", "workspace-write"]
        run = _run([*argv, *codex, "Create greet.py."], env, work)
    assert run.returncode == 0, run.stderr
    assert DONE in run.stdout and (work / "greet.py").read_text() == SOURCE
    assert wire.seen == [] and len(up.calls) == 2
    assert (home / ".codex" / "config.toml").read_text() == config  # left as it was
    headers = up.requests[0].headers
    assert headers["authorization"] == "Bearer sk-test" and "x-contextfold-token" not in headers
    assert all("restore" in {t.get("name") for t in body["tools"]} for body in up.calls)
    summary = re.search(SUMMARY, run.stderr)
    assert summary and summary["store"] == str(tmp_path / "s.db") and summary["n"] == "2"
    _left_nothing(run, work)


@pytest.mark.npm("gemini")
def test_wrap_runs_gemini_cli_through_a_proxy_it_stops(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    script = gemini_writes_file(work / "greet.py", SOURCE)
    with ScriptedGemini(script, api_key="gm-test") as up, Tripwire() as wire:
        env = gemini_env(home, wire, "http://127.0.0.1:9", "gm-test")  # the user's own setup
        env = wrap_env({k: v for k, v in env.items() if k != "GOOGLE_GEMINI_BASE_URL"}, "gemini")
        argv = wrap_argv("--upstream", f"gemini:{up.url}", "--store", str(tmp_path / "s.db"))
        gemini = ["gemini", "-p", "Create greet.py.", "--yolo", "--output-format", "json"]
        run = _run([*argv, *gemini, "-m", GEMINI_MODEL], env, work)
    assert run.returncode == 0, run.stderr
    assert gemini_result(run)["response"] == DONE  # the CLI's own output, untouched
    assert (work / "greet.py").read_text() == SOURCE and wire.seen == []
    headers = up.requests[0].headers
    assert headers["x-goog-api-key"] == "gm-test" and "x-contextfold-token" not in headers
    declared = [
        {d["name"] for t in body["tools"] for d in t["functionDeclarations"]} for body in up.calls
    ]
    assert all("write_file" in names and "restore" in names for names in declared)
    summary = re.search(SUMMARY, run.stderr)
    assert summary and summary["store"] == str(tmp_path / "s.db")
    assert int(summary["n"]) == len(up.calls) >= 2
    _left_nothing(run, work)


@pytest.mark.npm("claude")
def test_wrap_uses_a_running_proxy_and_counts_only_its_own_run(tmp_path: Path) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    script = claude_writes_file(work / "greet.py", SOURCE)
    with (
        ScriptedAnthropic(script) as up,
        Tripwire() as wire,
        proxy_for(up, "anthropic", tmp_path / "s.db") as proxy,
    ):
        env = wrap_env(claude_env(home, wire) | {"CONTEXTFOLD_TOKEN": TOKEN}, "claude")
        run = _run([*wrap_argv("--url", proxy.url, "claude"), "-p", "Go.", *CLAUDE_ARGS], env, work)
        assert run.returncode == 0, run.stderr
        assert proxy.proxy.metrics.get("requests_total", status="200") == len(up.calls)
        again = _run(
            [*wrap_argv("--url", proxy.url, "claude"), "-p", "Go.", *CLAUDE_ARGS], env, work
        )
    assert again.returncode == 0, again.stderr
    summary = re.search(SUMMARY, again.stderr)
    assert summary and summary["store"] == f"the store of the proxy at {proxy.url[:-3]}"
    assert int(summary["n"]) == len(up.calls) - int(summary["n"])  # this run's requests only
    assert not (home / ".local" / "share" / "contextfold").exists()  # nothing of wrap's own


@pytest.mark.npm("claude")
def test_wrap_passes_the_clis_exit_status(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with ScriptedAnthropic() as up, Tripwire() as wire:
        env = wrap_env(claude_env(tmp_path / "home", wire), "claude")
        direct = _run([cli("claude"), "--no-such-option"], env, work)
        run = _run(
            [*wrap_argv("--upstream", f"anthropic:{up.url}", "claude"), "--no-such-option"],
            env,
            work,
        )
    assert direct.returncode not in (0, None) and run.returncode == direct.returncode
    assert "no request was answered" in run.stderr
    _left_nothing(run, work)


def _held(release: threading.Event) -> Any:
    def reply(body: dict[str, Any]) -> AnthropicReply:
        release.wait(60)
        return DONE

    return reply


@pytest.mark.npm("claude")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_wrap_goes_to_the_cli_and_wrap_stops_the_proxy(
    tmp_path: Path, signum: int
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    release = threading.Event()
    with ScriptedAnthropic(_held(release)) as up, Tripwire() as wire:
        env = wrap_env(claude_env(tmp_path / "home", wire), "claude")
        argv = [*wrap_argv("--upstream", f"anthropic:{up.url}", "claude"), "-p", "Wait."]
        wrapped = subprocess.Popen(
            argv,
            cwd=work,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        try:
            deadline = time.monotonic() + 120
            while not up.calls and time.monotonic() < deadline and wrapped.poll() is None:
                time.sleep(0.1)
            assert up.calls, "the CLI never called the model"
            wrapped.send_signal(signum)
            out, err = wrapped.communicate(timeout=45)  # the model would answer in 60 s
        finally:
            release.set()
            if wrapped.poll() is None:
                wrapped.kill()
    assert DONE not in out, (wrapped.returncode, out, err)  # it stopped before the answer
    assert "contextfold wrap: sessions in" in err
    assert port_closed(proxy_port(err)) and processes_in(work) == []


@pytest.mark.npm("claude")
def test_ctrl_c_on_the_terminal_reaches_the_cli_and_wrap_stops_the_proxy(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    release = threading.Event()
    with ScriptedAnthropic(_held(release)) as up, Tripwire() as wire:
        env = wrap_env(claude_env(tmp_path / "home", wire), "claude")
        argv = [*wrap_argv("--upstream", f"anthropic:{up.url}", "claude"), "-p", "Wait."]
        try:
            status, screen = _on_a_terminal(argv, env, work, until=lambda: bool(up.calls))
        finally:
            release.set()
    assert DONE not in screen and "contextfold wrap: sessions in" in screen, screen
    assert port_closed(proxy_port(screen)) and processes_in(work) == [], (status, screen)


def _on_a_terminal(
    argv: list[str], env: dict[str, str], work: Path, *, until: Any
) -> tuple[int, str]:
    """Run ``argv`` as the foreground job of a new terminal; once ``until()`` holds, type
    Ctrl-C on it. Its exit status and everything the terminal showed."""
    pid, master = pty.fork()
    if pid == 0:  # the child: session leader, the terminal its controlling one
        os.chdir(work)
        os.execve(argv[0], argv, env)
    shown = bytearray()
    deadline = time.monotonic() + 120
    typed = False
    while time.monotonic() < deadline:
        if not typed and until():
            os.write(master, b"\x03")
            typed, deadline = True, time.monotonic() + 45
        ready, _, _ = select.select([master], [], [], 0.1)
        try:
            chunk = os.read(master, 4096) if ready else b""
        except OSError:  # the terminal is closed: every process on it ended
            break
        if ready and not chunk:
            break
        shown += chunk
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), shown.decode(errors="replace")
