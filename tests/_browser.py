"""Headless Chromium through Selenium for the inspector's page tests.

Debian's ``chromium`` and ``chromium-driver`` (``make setup`` installs them): the driver's
path is given explicitly, so Selenium Manager never downloads anything. A missing browser,
driver or ``selenium`` package fails the test with what to install (never a silent skip).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

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
    "apt-get update && apt-get install -y chromium chromium-driver (as root; `make setup` "
    "does it) and pip install 'contextfold[inspect]'"
)


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
        pytest.fail(f"the inspector's browser tests need Chromium: {problem}; {INSTALL}")
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
    assert state == "1", f"the page did not load its data: {status}"
