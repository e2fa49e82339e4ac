"""``contextfold wrap``'s parts that need no CLI run: how each CLI is pointed (Claude Code's
variables, Codex's ``-c`` provider, valid TOML), the proxy's counters read back into the
summary, and the one-line errors given before anything starts (an unknown CLI, one not
installed, ``--url`` with serve options, a proxy that does not answer, an upstream that cannot
serve the CLI's API, a store that cannot be opened). The CLIs' own runs are in
``test_wrap_clis.py``."""

from __future__ import annotations

import signal
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from contextfold.cli import app
from contextfold.serve.ledger.metrics import Metrics
from contextfold.wrap import CLIS, Pointing
from contextfold.wrap.child import exit_status
from contextfold.wrap.proxy import parse_metrics, summary
from tests._clis import cli

TO = Pointing("http://127.0.0.1:4321", "tok")


def _wrap(*args: str) -> tuple[int, str]:
    done = CliRunner().invoke(app, ["wrap", *args])
    return done.exit_code, done.output


def test_claude_code_is_pointed_by_its_variables_keeping_the_users_headers() -> None:
    launch = CLIS["claude"].point(TO, {"ANTHROPIC_CUSTOM_HEADERS": "X-Team: a\n"})
    assert launch.options == []
    assert launch.env == {
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:4321",
        "ANTHROPIC_CUSTOM_HEADERS": "X-Team: a\nX-Contextfold-Token: tok",
    }
    bare = CLIS["claude"].point(Pointing("http://h:1", None), {})
    assert bare.env == {"ANTHROPIC_BASE_URL": "http://h:1"}


def _provider(options: list[str]) -> dict[str, object]:
    assert options[:2] == ["-c", 'model_provider="contextfold"'] and options[2] == "-c"
    key, _, value = options[3].partition("=")
    assert key == "model_providers.contextfold"
    parsed: dict[str, object] = tomllib.loads(f"p = {value}")["p"]
    return parsed


def test_codex_gets_a_responses_provider_on_its_command_line_and_the_token_by_variable() -> None:
    launch = CLIS["codex"].point(TO, {"OPENAI_API_KEY": "sk-x"})
    assert _provider(launch.options) == {
        "name": "contextfold",
        "base_url": "http://127.0.0.1:4321/v1",
        "wire_api": "responses",
        "supports_websockets": False,
        "env_key": "OPENAI_API_KEY",
        "env_http_headers": {"X-Contextfold-Token": "CONTEXTFOLD_TOKEN"},
    }
    assert launch.env == {"CONTEXTFOLD_TOKEN": "tok"}
    assert "tok" not in " ".join(launch.options)  # never on a command line others can read
    logged_in = _provider(CLIS["codex"].point(Pointing("http://h:1", None), {}).options)
    assert logged_in["requires_openai_auth"] is True and "env_key" not in logged_in


def test_the_summary_reads_the_proxys_counters_of_this_run() -> None:
    metrics = Metrics()
    metrics.add("requests_total", 2, status="200")
    metrics.add("prompt_tokens_received_total", 1000)
    before = parse_metrics(metrics.render())
    metrics.add("requests_total", 1, status="200")
    metrics.add("requests_total", 1, status="502")
    metrics.add("prompt_tokens_received_total", 4000)
    metrics.add("tokens_saved_total", 1000)
    line = summary(before, parse_metrics(metrics.render()), sessions="/s.db", log=None)
    assert line == (
        "contextfold wrap: sessions in /s.db; 2 requests: the upstream was spared 1,000 of "
        "4,000 prompt tokens (25%)"
    )
    metrics.add("billed_usd_total", 0.25, arm="treated", call="client")
    metrics.add("billed_usd_total", 0.0125, arm="treated", call="restore")
    metrics.add("direct_estimate_usd_total", 0.5, arm="treated")
    billed = summary(before, parse_metrics(metrics.render()), sessions="/s.db", log=None)
    assert billed.endswith("prompt tokens (25%); billed $0.26, about $0.50 direct")
    one = {**before, "requests_total": before["requests_total"] + 1}
    assert "; 1 request: the upstream" in summary(before, one, sessions="/s.db", log=None)
    idle = summary(before, before, sessions="/s.db", log="/w.log")
    assert idle.endswith("no request was answered; the proxy logged warnings to /w.log")


def test_an_unknown_cli_and_serve_options_beside_url_are_refused_in_one_line() -> None:
    code, out = _wrap("aider")
    assert code == 2
    assert out == "error: no CLI 'aider': contextfold wrap runs claude, codex or gemini\n"
    code, out = _wrap("--url", "http://127.0.0.1:9", "-s", "window", "--budget", "9", "claude")
    assert code == 2
    assert out.strip().endswith("own options: leave out --strategy, --budget")


def test_a_cli_not_installed_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    code, out = _wrap("codex", "exec", "hi")
    assert code == 127
    assert (
        out
        == "error: codex (Codex CLI) is not installed (not on PATH): npm install -g @openai/codex\n"
    )


@pytest.fixture
def claude_on_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("PATH", f"{Path(cli('claude')).parent}:/usr/bin:/bin")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path


@pytest.mark.npm("claude")
def test_nothing_starts_when_the_proxy_cannot_serve_the_cli(claude_on_path: Path) -> None:
    code, out = _wrap("--upstream", "responses:http://127.0.0.1:9/v1", "claude", "-p", "hi")
    assert code == 2 and out.count("\n") == 1
    served = "serves OpenAI Responses and Gemini generateContent"  # the one a Responses upstream
    assert f"{served}, not the CLI's Anthropic Messages: give anthropic:URL, gemini:URL" in out
    code, out = _wrap("--store", str(claude_on_path / "no" / "s.db"), "claude", "-p", "hi")
    assert code == 2 and "directory" in out and out.count("\n") == 1
    code, out = _wrap("--url", "http://127.0.0.1:9", "claude", "-p", "hi")
    assert code == 2 and out.startswith("error: no contextfold serve answers at http://127.0.0.1:9")


def test_the_exit_status_is_a_shells() -> None:
    assert exit_status(3) == 3 and exit_status(0) == 0
    assert exit_status(-signal.SIGTERM) == 143 and exit_status(-signal.SIGINT) == 130


def test_gemini_cli_is_pointed_by_its_variables_keeping_the_users_headers(
    tmp_path: Path,
) -> None:
    """Headless Gemini CLI also needs a trusted folder (set unless the user set it) and an auth
    method chosen in its settings, which wrap does not write: it says what to add."""
    home = {"HOME": str(tmp_path)}
    launch = CLIS["gemini"].point(TO, {"GEMINI_CLI_CUSTOM_HEADERS": "X-Team: a,", **home})
    assert launch.options == []
    assert launch.env == {
        "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:4321",
        "GEMINI_CLI_CUSTOM_HEADERS": "X-Team: a, X-Contextfold-Token: tok",
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }
    settings = tmp_path / ".gemini" / "settings.json"
    assert launch.note is not None and str(settings) in launch.note
    assert '"selectedType": "gemini-api-key"' in launch.note
    settings.parent.mkdir()
    settings.write_text('{"security": {"auth": {"selectedType": "gemini-api-key"}}}')
    mine = {"GEMINI_CLI_TRUST_WORKSPACE": "false", **home}
    bare = CLIS["gemini"].point(Pointing("http://h:1", None), mine)
    assert bare.env == {"GOOGLE_GEMINI_BASE_URL": "http://h:1"} and bare.note is None
    settings.write_text('{"security": "odd"}')
    assert CLIS["gemini"].point(TO, home).note is not None
