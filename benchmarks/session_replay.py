"""Session against replay on the same recorded runs: the façade adds nothing and loses nothing.

    .venv/bin/python benchmarks/session_replay.py [DATA] [-s full -s refold] [--limit N]
        [--json out.json]

The runs (default ``../shared/data/mini-swe-agent-dev``, 100 mini-swe-agent runs) are fed to
a :class:`~contextfold.session.Session` as OpenAI messages call by call: before each recorded
assistant step, the whole conversation so far as a client resends it (one list that grows,
each message a dict). Each prepared view is metered as replay meters its views
(:class:`~contextfold.core.meter.Meter`, the recorded step's completion tokens, the qwen3-8b
profile and its counter), under both price tables. Beside it, ``contextfold replay DATA -s ...
--prices P --no-restore-pricing --no-rerun-pricing --json`` is run on the same runs, once per
price table (the restore and re-run calls replay would add are calls a Session's caller
makes, not the Session). Prompt tokens and cost are
shown as multiples of ``full``; the two routes should give the same numbers exactly.

Also the wall time of ``prepare`` per call (median, p99): checking the resent messages,
appending and counting the new ones, folding, rendering, checking the view and turning it into
OpenAI dicts; beside it, replay's median render time (``render`` and the view check alone, the
messages counted beforehand).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from contextfold.bench.report import progress_bar
from contextfold.core.counters import resolve_counter
from contextfold.core.messages import to_openai
from contextfold.core.meter import PRICE_TABLES, Meter, get_profile
from contextfold.importers import iter_trajectories
from contextfold.importers.base import Trajectory
from contextfold.session import Session

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "mini-swe-agent-dev"
PROFILE = "qwen3-8b"
TABLES = ("default", "openai")


@dataclass(slots=True)
class Totals:
    """One strategy's sums over the runs, per price table, and its prepare times."""

    prompt_tokens: int = 0
    cost: dict[str, float] = field(default_factory=lambda: dict.fromkeys(TABLES, 0.0))
    runs: int = 0
    skipped: list[str] = field(default_factory=list)
    prepare_ms: list[float] = field(default_factory=list)


def through_session(spec: str, traj: Trajectory, totals: Totals) -> None:
    """One run through a Session, call by call, metered under both price tables."""
    profile = get_profile(PROFILE)
    counter = resolve_counter(profile.tokenizer)
    meters = {t: Meter(prices=PRICE_TABLES[t], profile=profile) for t in TABLES}
    session = Session(spec, counter=counter)
    conversation = [to_openai(traj.system)] if traj.system else []
    times: list[float] = []
    for step in traj.counted_steps(counter):
        if step.kind == "assistant":
            start = time.perf_counter_ns()
            prepared = session.prepare(conversation)
            times.append((time.perf_counter_ns() - start) / 1e6)
            for meter in meters.values():
                meter.record_call(prepared.view, completion_tokens=step.tokens[0])
        conversation += [to_openai(m) for m in step.messages]
    session.end()
    totals.runs += 1
    totals.prompt_tokens += meters["default"].prompt_tokens
    for table, meter in meters.items():
        totals.cost[table] += float(meter.summary()["cost_usd"])
    totals.prepare_ms += times


def sessions(data: Path, specs: Sequence[str], limit: int | None) -> dict[str, Totals]:
    items = list(iter_trajectories([data]))
    runs = [t for t in items if isinstance(t, Trajectory)][: limit or None]
    out = {spec: Totals() for spec in specs}
    with progress_bar(Console(stderr=True)) as progress:
        task = progress.add_task("through Session", total=len(runs) * len(specs))
        for traj in runs:
            for spec in specs:
                if not any(msgs[0].role == "assistant" for msgs in traj.steps):
                    out[spec].skipped.append(traj.id)  # replay skips an empty run too
                else:
                    through_session(spec, traj, out[spec])
                progress.advance(task)
    return out


def replayed(data: Path, specs: Sequence[str], limit: int | None, table: str) -> dict[str, Any]:
    """What ``contextfold replay`` reports for the same runs under one price table."""
    cli = Path(sys.executable).parent / "contextfold"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "replay.json"
        argv = [str(cli), "replay", str(data), "--prices", table, "--json", str(out)]
        argv += ["--no-restore-pricing", "--no-rerun-pricing"]  # a Session makes no such call
        argv += [a for spec in specs for a in ("-s", spec)]
        argv += ["--limit", str(limit)] if limit else []
        subprocess.run(argv, check=True, capture_output=True, text=True)
        result: dict[str, Any] = json.loads(out.read_text())
    return result


def table(mine: dict[str, Totals], theirs: dict[str, dict[str, Any]], base: str) -> list[str]:
    """Side by side, as multiples of ``base`` (80 columns)."""
    rows = [
        f"{'':15}{'prompt tokens':>14}{'x':>7}{'$ default':>12}{'x':>7}{'$ openai':>11}{'x':>7}"
    ]

    def row(
        label: str, tokens: int, cost: dict[str, float], ref: tuple[int, dict[str, float]]
    ) -> None:
        figures = f"{tokens:>14,}{tokens / ref[0]:>7.3f}"
        for t in TABLES:
            figures += f"{cost[t]:>{12 if t == 'default' else 11}.4f}{cost[t] / ref[1][t]:>7.3f}"
        rows.append(f"{label:15}{figures}")

    for route in ("replay", "Session"):
        ref = _figures(route, mine[base], theirs, base)
        for spec in mine:
            tokens, cost = _figures(route, mine[spec], theirs, spec)
            row(f"{spec[:7]} {route}", tokens, cost, ref)
    return rows


def _figures(
    route: str, totals: Totals, theirs: dict[str, dict[str, Any]], spec: str
) -> tuple[int, dict[str, float]]:
    if route == "Session":
        return totals.prompt_tokens, totals.cost
    return theirs["default"][spec]["prompt_tokens"], {
        t: theirs[t][spec]["cost_usd"] for t in TABLES
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", type=Path, default=DATA)
    parser.add_argument("-s", "--strategy", action="append", dest="specs")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    specs = args.specs or ["full", "refold"]
    start = time.perf_counter()
    mine = sessions(args.data, specs, args.limit)
    session_s = time.perf_counter() - start
    theirs = {t: replayed(args.data, specs, args.limit, t) for t in TABLES}
    for line in table(mine, theirs, specs[0]):
        print(line)
    report = _report(mine, theirs, specs)
    for spec, r in report.items():
        same = "equal" if r["equal"] else "DIFFERENT"
        print(f"{spec}: {r['runs']} runs, {r['calls']:,} calls, Session {same} to replay")
        print(
            f"  prepare {r['prepare_ms_median']:.3f} ms median, {r['prepare_ms_p99']:.3f} ms "
            f"p99 per call (replay's render {r['replay_render_ms_median']:.3f} ms median)"
        )
    print(f"through Session: {session_s:.1f} s for all runs and strategies")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


def _report(
    mine: dict[str, Totals], theirs: dict[str, dict[str, Any]], specs: Sequence[str]
) -> dict[str, dict[str, Any]]:
    out = {}
    for spec in specs:
        m, ms = mine[spec], sorted(mine[spec].prepare_ms)
        replay = {t: theirs[t][spec] for t in TABLES}
        equal = (
            m.prompt_tokens == replay["default"]["prompt_tokens"]
            and m.runs == replay["default"]["trajectories"]
            and all(m.cost[t] == replay[t]["cost_usd"] for t in TABLES)
        )
        out[spec] = {
            "runs": m.runs,
            "skipped": m.skipped,
            "calls": len(ms),
            "prompt_tokens": m.prompt_tokens,
            "cost_usd": m.cost,
            "replay_prompt_tokens": replay["default"]["prompt_tokens"],
            "replay_cost_usd": {t: replay[t]["cost_usd"] for t in TABLES},
            "replay_trajectories": replay["default"]["trajectories"],
            "equal": equal,
            "prepare_ms_median": statistics.median(ms) if ms else 0.0,
            "prepare_ms_p99": ms[int(0.99 * (len(ms) - 1))] if ms else 0.0,
            "replay_render_ms_median": replay["default"]["render_ms_median"],
        }
    return out


if __name__ == "__main__":
    main()
