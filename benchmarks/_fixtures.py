"""What the inspector's benchmark and its tests share: a synthetic mini-swe-agent trajectory
and a headless Chromium driven by Selenium.

Debian's ``chromium`` and ``chromium-driver`` (``make browser`` installs them): the driver's
path is given explicitly, so Selenium Manager never downloads anything. A missing browser,
driver or ``selenium`` package raises :class:`BrowserMissing` saying what to install (the
benchmark prints it and exits; the tests check :func:`missing` first and skip, naming it).

Imported as ``benchmarks._fixtures`` by the tests (the repository root is on their path) and
as ``_fixtures`` by the benchmarks (their own folder is on theirs).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1500,1100",
)
INSTALL = (
    "apt-get update && apt-get install -y chromium chromium-driver (as root; `make browser` "
    "does it) and pip install 'contextfold[inspect]'"
)


class BrowserMissing(RuntimeError):
    """Chromium, its driver or the selenium package is not installed."""


def missing() -> str | None:
    """What is missing to drive the browser, or None."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not path.exists():
            return f"{path} is missing"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "the selenium package is missing"
    return None


@contextmanager
def chrome() -> Iterator[Any]:
    """A headless Chromium driven by Selenium; always quit at the end."""
    problem = missing()
    if problem is not None:
        raise BrowserMissing(f"the inspector's page needs Chromium: {problem}; {INSTALL}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="cf-chrome-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait_ready(driver: Any, timeout: float = 20.0) -> None:
    """Wait until the page says its data is shown; fail with the page's status otherwise."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, timeout).until(
        lambda d: d.execute_script("return document.body.dataset.ready") in ("1", "error")
    )
    state = driver.execute_script("return document.body.dataset.ready")
    status = driver.find_element("id", "status").text
    if state != "1":
        raise AssertionError(f"the page did not load its data: {status}")


def swe_trajectory(path: Path, steps: int, *, lines: int = 12) -> Path:
    """A mini-swe-agent ``*.traj.json`` under ``path`` with ``steps`` bash commands (files
    read, some twice, tests run), each answered by a ``<returncode>`` message of about
    ``lines`` lines."""
    messages = [
        {"role": "system", "content": "You are a helpful assistant that runs bash commands."},
        {"role": "user", "content": "<pr_description>\nFix pkg's off-by-one.\n</pr_description>"},
    ]
    for i in range(steps):
        command = f"cat pkg/mod{i % 7}.py" if i % 3 else f"python -m pytest tests/test_{i % 5}.py"
        body = "\n".join(f"line {k} of output {i % 9}: value_{k * 7 + i % 9}" for k in range(lines))
        messages.append(
            {"role": "assistant", "content": f"THOUGHT: step {i}.\n\n```bash\n{command}\n```"}
        )
        messages.append(
            {"role": "user", "content": f"<returncode>0</returncode>\n<output>\n{body}\n</output>"}
        )
    out = path / "synthetic__swe-1" / "synthetic__swe-1.traj.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "info": {"exit_status": "Submitted", "submission": ""},
        "messages": messages,
        "trajectory_format": "mini-swe-agent-1",
        "instance_id": "synthetic__swe-1",
    }
    out.write_text(json.dumps(data), encoding="utf-8")
    return out
