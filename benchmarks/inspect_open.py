"""How long a 300-step SWE trajectory takes to open in ``contextfold inspect``.

Each run builds a fresh catalog and server (nothing cached), loads the page in headless
Chromium and reads the page's ``cf-ready`` performance mark: the time from the navigation's
start to the session's data shown (page and scripts loaded, the session replayed through
every strategy and encoded to JSON on request, fetched, parsed, plots and both columns
drawn). Reports the median of the runs.

    PYTHONPATH=src .venv/bin/python benchmarks/inspect_open.py [--steps 300] [--runs 5] \
        [-s full -s refold] [--screenshot docs/inspect.png]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _fixtures import BrowserMissing, chrome, swe_trajectory, wait_ready

from contextfold.core.meter import PRICE_TABLES, PROFILES
from contextfold.inspect import InspectServer, Setup, collect


def main() -> None:
    try:
        measure()
    except BrowserMissing as error:
        sys.exit(f"inspect_open: {error}")


def measure() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("-s", "--strategy", action="append", default=None)
    parser.add_argument("--screenshot", type=Path, default=None)
    args = parser.parse_args()
    specs = args.strategy or ["full", "refold"]
    setup = Setup(PRICE_TABLES["default"], PROFILES["qwen3-8b"])
    with tempfile.TemporaryDirectory() as tmp, chrome() as browser:
        path = swe_trajectory(Path(tmp), args.steps, lines=30)
        times, builds = [], []
        for _ in range(args.runs):
            catalog = collect([path], specs, setup, "approx")
            with InspectServer(catalog) as server:
                browser.get("about:blank")
                browser.get(f"{server.url}#s=0&r=1&step={args.steps}")
                wait_ready(browser, timeout=60)
                ready = browser.execute_script(
                    "return performance.getEntriesByName('cf-ready')[0].startTime"
                )
                times.append(float(ready))
                start = time.perf_counter()  # the JSON alone, again, for the breakdown
                collect([path], specs, setup, "approx").entries[0].data()
                builds.append((time.perf_counter() - start) * 1000)
            if args.screenshot is not None:
                browser.save_screenshot(str(args.screenshot))
        size = len(str(catalog.entries[0].data()))
    print(
        f"{args.steps}-step trajectory, strategies {specs}: open to data shown "
        f"median {statistics.median(times):.0f} ms (runs: {', '.join(f'{t:.0f}' for t in times)}); "
        f"session JSON build median {statistics.median(builds):.0f} ms, ~{size / 1e6:.1f} MB"
    )


if __name__ == "__main__":
    main()
