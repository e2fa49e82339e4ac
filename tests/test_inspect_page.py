"""contextfold inspect in a real headless Chromium (Selenium): a stored session and a
replayed SWE trajectory load; elisions and the cache break are shown where the data puts
them; compare shows two strategies side by side; a screenshot is saved. The ``browser`` fixture
(conftest) marks them ``browser``: without Chromium, chromedriver or selenium they are skipped
with what to install (they fail under ``make test``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks import _fixtures
from benchmarks._fixtures import BrowserMissing, chrome, swe_trajectory, wait_ready
from contextfold.core.meter import PRICE_TABLES, PROFILES
from contextfold.inspect import Catalog, InspectServer, Setup, collect
from tests._inspect_data import stored_session

SETUP = Setup(PRICE_TABLES["default"], PROFILES["qwen3-8b"])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Catalog, str]]:
    root = tmp_path_factory.mktemp("inspect")
    stored_session(root / "s.db")
    traj = swe_trajectory(root, 12)
    catalog = collect([root / "s.db", traj], ["full", "window keep=3"], SETUP, "approx")
    with InspectServer(catalog) as server:
        yield catalog, server.url


def open_page(browser: Any, url: str) -> None:
    """Load ``url`` afresh (a new hash alone would reuse the page) and wait for its data."""
    browser.get("about:blank")
    browser.get(url)
    wait_ready(browser)


def shown(browser: Any, selector: str, attribute: str) -> list[str]:
    return [e.get_attribute(attribute) for e in browser.find_elements("css selector", selector)]


def check_call(browser: Any, data: dict[str, Any], run: dict[str, Any], ci: int) -> None:
    """The page's view and history agree with the data of call ``ci``."""
    call = run["calls"][ci]
    els = [data["els"][e] for e in call["e"]]
    assert sorted(shown(browser, "#view .elision", "data-reason")) == sorted(e[1] for e in els)
    badges = browser.find_elements("css selector", "#view .elision")
    for badge, el in zip(badges, els, strict=True):
        text = badge.get_attribute("textContent")  # (folded away when there are many)
        assert f"{el[2]} tok" in text and (el[3] or "no restore path") in text
    elided = {s for e in els for s in e[0]}
    for step in elided:
        node = browser.find_element("css selector", f'#history .step[data-step="{step}"]')
        assert node.find_elements("css selector", ".elision"), f"step {step} shows no elision"
    brk = shown(browser, "#view .cache-break", "data-pos")
    assert brk == ([] if call["brk"] is None else [str(call["brk"])])
    if call["brk"] is not None:  # the marker sits right before the first message that differs
        after = browser.find_element("css selector", "#view .cache-break + .msg")
        assert after.get_attribute("data-pos") == str(call["brk"])


def test_a_stored_session_shows_each_call_against_the_history(
    browser: Any, served: tuple[Catalog, str]
) -> None:
    catalog, url = served
    data = catalog.entries[0].data()
    run = data["runs"][0]
    ci = next(i for i, c in enumerate(run["calls"]) if c["brk"] is not None and c["e"])
    open_page(browser, f"{url}#s=0&r=0&step={run['calls'][ci]['step']}")
    assert "sent (window keep=2)" in browser.find_element("id", "legend").text
    assert len(browser.find_elements("css selector", "#timeline button")) == len(run["calls"])
    check_call(browser, data, run, ci)
    assert len(browser.find_elements("css selector", "#plots svg polyline")) == 3 * 3


def test_a_replayed_swe_trajectory_marks_elisions_and_the_cache_break(
    browser: Any, served: tuple[Catalog, str], tmp_path: Path
) -> None:
    catalog, url = served
    data = catalog.entries[1].data()
    window = data["runs"][1]
    open_page(browser, f"{url}#s=1&r=1&step={window['calls'][0]['step']}")
    for ci in (0, 2, len(window["calls"]) - 1):  # clicked in the timeline, as a person would
        browser.find_element("css selector", f'#timeline button[data-call="{ci}"]').click()
        check_call(browser, data, window, ci)
    summary = browser.find_element("css selector", '#view .msg[data-kind="verbatim"] .links a')
    summary.click()  # a provenance link highlights the step it stands for
    assert browser.find_elements("css selector", "#history .step.hl")
    shot = tmp_path / "inspect-call.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000


def test_compare_shows_two_strategies_aligned_by_step(
    browser: Any, served: tuple[Catalog, str], tmp_path: Path
) -> None:
    catalog, url = served
    data = catalog.entries[1].data()
    step = data["runs"][0]["calls"][-1]["step"]
    open_page(browser, f"{url}#s=1&r=0&step={step}&tab=compare")
    heads = [e.text for e in browser.find_elements("css selector", "#compare-table th.run")]
    assert heads == ["full", "window keep=3"]
    rows = browser.find_elements("css selector", "#compare-table tbody tr")
    assert [r.get_attribute("data-step") for r in rows] == [
        str(c["step"]) for c in data["runs"][0]["calls"]
    ]
    cols = browser.find_elements("css selector", "#compare-views .col")
    assert [c.get_attribute("data-run") for c in cols] == ["full", "window keep=3"]
    for col, run in zip(cols, data["runs"], strict=True):
        assert len(col.find_elements("css selector", ".msg")) == len(views_at(run, step))
    shot = tmp_path / "inspect-compare.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000


def views_at(run: dict[str, Any], step: int) -> list[Any]:
    view: list[Any] = []
    for call in run["calls"]:
        view = view[: call["keep"]] + call["add"]
        if call["step"] == step:
            return view
    raise AssertionError(f"no call at step {step}")


def test_without_chromium_the_driver_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(_fixtures, "CHROMIUM", tmp_path / "no-chromium")
    failing = pytest.raises(BrowserMissing, match=r"no-chromium is missing; apt-get update")
    with failing, chrome():
        pass
