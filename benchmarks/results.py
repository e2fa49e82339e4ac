"""Every figure the documentation shows, generated: replays and benchmarks written as pages in
``docs/results/`` (tables within 80 columns, PNG plots), each stamped with the commit and a
hash of the data it read. The docs and the README include these files; nothing is pasted.

    .venv/bin/python benchmarks/results.py [--data DIR] [--only PAGE ...] [--sufficiency]
    .venv/bin/python benchmarks/results.py --check      # what make test checks

``samples`` replays the sessions bundled with the package (a second; anyone can reproduce
it). ``replay`` (``results_replay.py``), ``refold``, ``billed`` (``results_billed.py``: Claude
Code's logs against their bill), ``learning``, ``folders`` and ``serve``
read the recorded runs in ``--data`` (default ``../shared/data``, beside the repository;
``docs/results/index.md`` says where they come from): minutes. ``sufficiency`` runs the tau2
oracle benchmark (half an hour or more on 2 cores) and is written only with
``--sufficiency``. ``--check`` regenerates the samples page and compares it, and the README's
results table, with what is checked in.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import replay_setup as setup
import results_md as md
from results_md import COMMAND, OUT, both_prices, ratio
from results_replay import MODEL_FREE, replay_page

README = md.ROOT / "README.md"
DATA = md.ROOT.parent / "shared" / "data"
README_MARKS = ("<!-- results:start -->", "<!-- results:end -->")


def samples_dir() -> Path:
    return Path(str(resources.files("contextfold") / "data"))


def samples_page() -> md.Page:
    data = samples_dir()
    page = md.Page(
        "samples",
        "Bundled samples",
        "The two sample sessions that ship with the package (`src/contextfold/data`: a tau2 "
        "airline conversation and a mini-swe-agent coding run, written for it) replayed "
        "through every strategy that needs no model, as `contextfold replay` and "
        "`contextfold demo` replay them (model profile qwen3-8b, restores priced). They are "
        "small on purpose: the figures show the machinery, not a measurement. `make test` "
        "checks that this page is what the code at hand generates.",
        [data],
        f"{COMMAND} --only samples",
    )
    runs = both_prices(data, MODEL_FREE)
    base, base_o = runs["default"]["full"], runs["openai"]["full"]
    rows = [
        [
            label,
            f"{s['prompt_tokens']:,}",
            ratio(s["prompt_tokens"], base["prompt_tokens"]),
            ratio(s["cost_usd"], base["cost_usd"]),
            ratio(runs["openai"][label]["cost_usd"], base_o["cost_usd"]),
            f"{s['prefix_cache_reuse']:.3f}",
            str(s["restores"]),
            f"{s['args_lost']:.3f}",
        ]
        for label, s in runs["default"].items()
    ]
    heads = ["strategy", "tokens", "x full", "cost", "openai", "reuse", "rest.", "lost"]
    page.section("table", md.table(heads, rows))
    page.text(
        "tokens: prompt tokens over every call of both sessions, x full: as a multiple of "
        "full's; cost: the cost under the default price table as a multiple of full's, "
        "openai: the same under the openai table; reuse: the share of prompt tokens a prefix "
        "cache serves; rest.: restore calls a live agent would make; lost: the share of the "
        "values the recorded calls need that the view neither shows nor can restore "
        "([the measures](../measure/measures.md))."
    )
    return page


def main() -> None:
    from results_billed import billed_page
    from results_pages import folders_page, learning_page, refold_page, sufficiency_page
    from results_serve import serve_page

    shared: dict[str, Callable[[Path], md.Page]] = {
        "replay": replay_page,
        "refold": refold_page,
        "billed": billed_page,
        "learning": learning_page,
        "folders": folders_page,
        "serve": serve_page,
        "sufficiency": sufficiency_page,
    }
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the recorded runs' folder")
    parser.add_argument("--only", action="append", choices=["samples", *shared], default=None)
    parser.add_argument("--sufficiency", action="store_true", help="also the slow benchmark")
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args()
    if args.check:
        sys.exit(check())
    wanted = args.only or [
        "samples",
        *(n for n in shared if n != "sufficiency" or args.sufficiency),
    ]
    for name in wanted:
        start = time.perf_counter()
        if name != "samples" and not args.data.is_dir():
            print(f"{name}: skipped, no recorded runs at {args.data} (docs/results/index.md)")
            continue
        page = samples_page() if name == "samples" else shared[name](args.data)
        (OUT / f"{page.name}.md").write_text(page.render(), encoding="utf-8")
        print(f"wrote docs/results/{page.name}.md in {time.perf_counter() - start:.1f} s")
        if name == "replay":
            write_readme(page.render())


def write_readme(replay_text: str) -> None:
    """The README's results table: the replay page's headline, between the README's marks."""
    start, end = README_MARKS
    text = README.read_text(encoding="utf-8")
    block = f"{start}\n{md.section_of(replay_text, 'headline')}\n{end}"
    README.write_text(re.sub(f"{start}.*?{end}", lambda _: block, text, flags=re.S), "utf-8")


def check() -> int:
    """0 when the samples page is what the code generates and the README's table is the
    replay page's; otherwise 1, saying what differs."""
    problems = []
    fresh = md.without_stamp(samples_page().render())
    kept = md.without_stamp((OUT / "samples.md").read_text(encoding="utf-8"))
    if fresh != kept:
        problems.append(f"docs/results/samples.md is stale: run {COMMAND} --only samples")
    start, end = README_MARKS
    readme = README.read_text(encoding="utf-8")
    table = readme.split(start, 1)[-1].split(end, 1)[0].strip()
    replay = md.section_of((OUT / "replay.md").read_text(encoding="utf-8"), "headline").strip()
    if table != replay:
        problems.append(f"README's results table is not docs/results/replay.md's: run {COMMAND}")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    setup.main_or_error(main)
