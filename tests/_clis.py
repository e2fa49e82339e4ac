"""Claude Code, Codex CLI and Gemini CLI run as a user runs them, pointed at a base URL, offline.

:func:`run_claude` runs ``claude -p`` with ``ANTHROPIC_BASE_URL`` at the given address;
:func:`run_codex` runs ``codex exec`` with a custom Responses provider at the given address,
written into a fresh ``CODEX_HOME``; :func:`run_gemini` runs ``gemini -p`` with
``GOOGLE_GEMINI_BASE_URL`` at the given address, API-key auth chosen in its settings. All take
the base URL, so the same test drives a CLI straight at a scripted upstream or through
``contextfold serve`` by changing only the URL.
Each run is sealed off: HOME, configuration and caches in a temporary folder; telemetry,
error reporting, update checks and plugin syncs off; and every proxy variable pointed at a
:class:`Tripwire` on loopback (``NO_PROXY`` keeps 127.0.0.1), which refuses and records each
request for any other host, so nothing leaves the machine and a test can say nothing tried.

:func:`claude_writes_file`, :func:`codex_writes_file` and :func:`gemini_writes_file` script the
small coding task the tests give each CLI: the first call is answered with the tool call that
writes the file (Claude Code's ``Write``, Codex's ``apply_patch``, Gemini CLI's ``write_file``),
the call after its result with a closing line.
"""

from __future__ import annotations

import json
import os
import shutil
import socketserver
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contextfold.testing.upstreams.anthropic import AnthropicReply, text, tool_use
from contextfold.testing.upstreams.gemini import GeminiReply, function_call
from contextfold.testing.upstreams.responses import ResponsesReply, custom_tool_call, message
from contextfold.testing.upstreams.responses import function_call as responses_call

__all__ = [
    "CODEX_MODEL",
    "DONE",
    "GEMINI_MODEL",
    "MARKS",
    "SHOWN",
    "WRITING",
    "CliRun",
    "Tripwire",
    "claude_env",
    "claude_result",
    "claude_writes_file",
    "cli",
    "codex_config",
    "codex_env",
    "codex_writes_file",
    "gemini_env",
    "gemini_result",
    "gemini_settings",
    "gemini_writes_file",
    "run_claude",
    "run_codex",
    "run_gemini",
]

ROOT = Path(__file__).resolve().parents[1]
CODEX_MODEL = "gpt-5.5"
"""A model Codex knows (so it offers its real tools, apply_patch among them)."""
GEMINI_MODEL = "gemini-3.1-pro-preview"
"""Gemini CLI's main model for an API key. Named (``-m``), it answers every call; left to
``auto``, a router first asks ``gemini-3.5-flash-lite`` to rate each prompt (a JSON reply)."""
DONE = "Done: the file is written."
WRITING = "Writing the file."
RESTORING = "Restoring the cut lines."
MARKS = "\nPROGRESS: wrote the file\nSTALE: none"
"""Marker lines ending a reply, as refold asks the model to write them."""
RESTORE_ID = "call_restore_1"
SHOWN = f"{RESTORING}\n\n{DONE}"
"""What a CLI shows of a restore round and the answer after it, through the proxy."""


@dataclass(frozen=True, slots=True)
class CliRun:
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def check(self) -> CliRun:
        """This run, or an AssertionError that shows what the CLI printed."""
        assert self.returncode == 0, f"exit {self.returncode}\n{self.stdout}\n{self.stderr}"
        return self


class Tripwire:
    """A loopback 'proxy' that answers nothing: it records the first line of each request a
    CLI sent through it (``CONNECT api.example.com:443 HTTP/1.1``) and closes the connection.
    Use as a context manager; :attr:`seen` lists what tried to leave."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        wire = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                wire.seen.append(self.rfile.readline(512).decode(errors="replace").strip())

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Tripwire:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def cli(name: str) -> str:
    """The path of an npm CLI: the project's node_modules first (``make npm``), then PATH."""
    local = ROOT / "node_modules" / ".bin" / name
    found = str(local) if local.exists() else shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"{name} is not installed: run `make npm`")
    return found


def _sealed(home: Path, proxy: str) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TMPDIR": str(home),
        **{k: proxy for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")},
        **{k: "127.0.0.1,localhost" for k in ("NO_PROXY", "no_proxy")},
    }


def _run(argv: list[str], env: dict[str, str], workdir: Path, timeout: float) -> CliRun:
    start = time.perf_counter()
    done = subprocess.run(
        argv,
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    return CliRun(done.returncode, done.stdout, done.stderr, time.perf_counter() - start)


def run_claude(
    prompt: str,
    *,
    base_url: str,
    workdir: Path,
    home: Path,
    tripwire: Tripwire,
    api_key: str = "sk-ant-test",
    extra_env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> CliRun:
    """``claude -p PROMPT`` in ``workdir`` against ``base_url`` (an Anthropic base URL: no
    ``/v1``), edits accepted, JSON out. ``extra_env``: e.g. ``ANTHROPIC_AUTH_TOKEN`` (sent as
    ``Authorization: Bearer`` beside ``x-api-key``) or ``ANTHROPIC_CUSTOM_HEADERS``
    (``Name: value`` lines sent on every request)."""
    env = claude_env(home, tripwire, api_key) | {"ANTHROPIC_BASE_URL": base_url}
    env |= dict(extra_env or {})
    argv = [cli("claude"), "-p", prompt, "--permission-mode", "acceptEdits"]
    return _run([*argv, "--output-format", "json"], env, workdir, timeout)


def claude_env(home: Path, tripwire: Tripwire, api_key: str = "sk-ant-test") -> dict[str, str]:
    """Claude Code's sealed environment (no base URL: the caller points it)."""
    return _sealed(home, tripwire.url) | {
        "ANTHROPIC_API_KEY": api_key,
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",  # a failing upstream shows at once, not after backoff
    }


def codex_env(home: Path, tripwire: Tripwire, base_url: str, api_key: str) -> dict[str, str]:
    """Codex's sealed environment, with a fresh ``CODEX_HOME`` whose config's provider is
    ``base_url`` (:func:`codex_config`) and its key in ``CONTEXTFOLD_TEST_KEY``."""
    codex = {"CODEX_HOME": str(home / ".codex"), "CONTEXTFOLD_TEST_KEY": api_key}
    env = _sealed(home, tripwire.url) | codex
    (home / ".codex").mkdir(exist_ok=True)
    (home / ".codex" / "config.toml").write_text(codex_config(base_url))
    return env


def codex_config(base_url: str, *, model: str = CODEX_MODEL) -> str:
    """A ``config.toml`` whose provider is ``base_url`` (Responses over plain HTTP, no
    retries so a failure shows at once) with analytics, update checks and plugins off."""
    return f"""model = "{model}"
model_provider = "contextfold"
check_for_update_on_startup = false

[analytics]
enabled = false

[features]
plugins = false

[model_providers.contextfold]
name = "contextfold"
base_url = "{base_url}"
env_key = "CONTEXTFOLD_TEST_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
supports_websockets = false
"""


def run_codex(
    prompt: str,
    *,
    base_url: str,
    workdir: Path,
    home: Path,
    tripwire: Tripwire,
    api_key: str = "sk-test",
    extra_env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> CliRun:
    """``codex exec PROMPT`` in ``workdir`` (workspace-write sandbox) against ``base_url``
    (ending in ``/v1``); ``api_key`` is sent as ``Authorization: Bearer``."""
    env = codex_env(home, tripwire, base_url, api_key) | dict(extra_env or {})
    argv = [cli("codex"), "exec", "--skip-git-repo-check", "--strict-config"]
    return _run([*argv, "--sandbox", "workspace-write", prompt], env, workdir, timeout)


def gemini_settings() -> dict[str, Any]:
    """Gemini CLI's ``settings.json``: API-key auth (the one a base URL works with headless),
    no folder-trust prompt, no usage statistics or telemetry, no update checks, no retries."""
    return {
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False,
                    "maxAttempts": 1},
    }  # fmt: skip


def gemini_env(home: Path, tripwire: Tripwire, base_url: str, api_key: str) -> dict[str, str]:
    """Gemini CLI's sealed environment, its ``~/.gemini/settings.json`` written
    (:func:`gemini_settings`), the key in ``GEMINI_API_KEY``, pointed at ``base_url``."""
    env = _sealed(home, tripwire.url)
    (home / ".gemini").mkdir(exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(gemini_settings()))
    return env | {"GEMINI_API_KEY": api_key, "GOOGLE_GEMINI_BASE_URL": base_url}


def run_gemini(
    prompt: str,
    *,
    base_url: str,
    workdir: Path,
    home: Path,
    tripwire: Tripwire,
    api_key: str = "gm-test",
    model: str = GEMINI_MODEL,
    extra_env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> CliRun:
    """``gemini -p PROMPT`` in ``workdir`` against ``base_url`` (a Gemini base URL: no
    ``/v1beta``), tools approved (``--yolo``), JSON out; ``api_key`` is sent as
    ``x-goog-api-key``."""
    env = gemini_env(home, tripwire, base_url, api_key) | dict(extra_env or {})
    argv = [cli("gemini"), "-p", prompt, "--yolo", "--output-format", "json", "-m", model]
    return _run(argv, env, workdir, timeout)


def _results(content: Any, kind: str) -> list[dict[str, Any]]:
    return [b for b in content if b.get("type") == kind] if isinstance(content, list) else []


def claude_writes_file(
    path: Path, content: str, *, restoring: bool = False
) -> Callable[[dict[str, Any]], AnthropicReply]:
    """Claude Code's script: ``Write`` ``path``, then close once its result came back. With
    ``restoring`` (through ``contextfold serve``), the model first calls the proxy's
    ``restore`` in a reply ending in marker lines (:data:`RESTORING`), and closes with
    :data:`DONE` and marker lines once the proxy answered it; its first reply ends in marker
    lines too."""

    def reply(body: dict[str, Any]) -> AnthropicReply:
        results = _results(body["messages"][-1]["content"], "tool_result")
        if restoring and any(r.get("tool_use_id") == RESTORE_ID for r in results):
            return DONE + MARKS
        if results:
            if not restoring:
                return DONE
            return [text(RESTORING + MARKS), tool_use("restore", {"step": 1}, id=RESTORE_ID)]
        write = tool_use("Write", {"file_path": str(path), "content": content})
        return [text(WRITING + (MARKS if restoring else "")), write]

    return reply


def codex_writes_file(
    name: str, content: str, *, restoring: bool = False
) -> Callable[[dict[str, Any]], ResponsesReply]:
    """Codex's script: ``apply_patch`` adding ``name``, then close once its output came back
    (with ``restoring``, by way of the proxy's ``restore``, as :func:`claude_writes_file`)."""
    lines = "".join(f"+{line}\n" for line in content.splitlines())
    patch = f"*** Begin Patch\n*** Add File: {name}\n{lines}*** End Patch\n"

    def reply(body: dict[str, Any]) -> ResponsesReply:
        outputs = [i for i in body["input"] if i.get("type", "").endswith("_call_output")]
        if restoring and any(i.get("call_id") == RESTORE_ID for i in outputs):
            return DONE + MARKS
        if outputs:
            if not restoring:
                return DONE
            restore = responses_call("restore", {"step": 1}, call_id=RESTORE_ID)
            return [message(RESTORING + MARKS), restore]
        patching = [message(WRITING + MARKS)] if restoring else []
        return [*patching, custom_tool_call("apply_patch", patch)]

    return reply


def gemini_writes_file(path: Path, content: str) -> Callable[[dict[str, Any]], GeminiReply]:
    """Gemini CLI's script: ``write_file`` ``path``, then close once its response came back."""

    def reply(body: dict[str, Any]) -> GeminiReply:
        if any("functionResponse" in p for p in body["contents"][-1]["parts"]):
            return DONE
        write = function_call("write_file", {"file_path": str(path), "content": content})
        return [{"text": "Writing the file."}, write]

    return reply


def claude_result(run: CliRun) -> dict[str, Any]:
    """The result object ``claude -p --output-format json`` printed."""
    result: dict[str, Any] = json.loads(run.stdout)
    return result


def gemini_result(run: CliRun) -> dict[str, Any]:
    """The result object ``gemini -p --output-format json`` printed."""
    result: dict[str, Any] = json.loads(run.stdout)
    return result
