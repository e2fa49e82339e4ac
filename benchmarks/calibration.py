"""How close replay's simulated full comes to what Claude Code's logs say each session was
billed, step by step of the calibration, on sessions it was tuned on and sessions it was not.

    PYTHONPATH=src .venv/bin/python -m benchmarks.calibration [--data DIR] [--json FILE]

The 60 swecontextbench sessions of ``claude-code-dev`` are split as sorted: the first 30 files
tune (the thinking weight is chosen on them), the other 30 and tokbench's session with its
subagents check. Each set is replayed as full under five meters, each adding one step to the
one before: today's (vLLM's 16-token blocks, the counter's own tokens, no prefix), the
session's calibration (its unlogged prefix from the first call and its scale, the first
call's read of the prefix), the provider's cache rule (Anthropic: exact to the breakpoint, the
uncached tail, its minimum, entries gone after 5 minutes or an hour unused), the thinking rule
(earlier turns' thinking dropped for models that keep only the last turn's, the resent
thinking weighted), and the billed output where the log holds the final count. Each measure's
error is simulated / billed - 1, at each model's own prices; the bill's output where the log
holds no final count is the calibrated counter's, so the output error is measured apart, on
the calls whose final count the log holds.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from contextfold.bench.billed import MEASURES, SessionBilling, measures, session_billing
from contextfold.bench.stepping import replay_one
from contextfold.core.billing import BilledUsage
from contextfold.core.caches import VLLM
from contextfold.core.calibration import THINKING_WEIGHT, Calibration, output_scale
from contextfold.core.meter import PRICE_TABLES, Meter, get_profile
from contextfold.core.tokens import ApproxCounter
from contextfold.importers import Trajectory, iter_trajectories
from contextfold.strategies.registry import build_strategy

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "claude-code-dev"
STEPS = ("today", "+ calibration", "+ cache rule", "+ thinking", "+ billed output")
WEIGHTS = (1.0, 1.25, 1.5, 1.75, 2.0)
COUNTER = ApproxCounter()


def sets(data: Path) -> dict[str, list[Path]]:
    files = sorted((data / "swecontextbench").glob("*.jsonl"))
    return {"tune": files[:30], "check": files[30:], "tokbench": [data / "tokbench"]}


def sessions(paths: list[Path]) -> Iterator[Trajectory]:
    for path in paths:
        for item in iter_trajectories([path]):
            if isinstance(item, Trajectory) and item.calls:
                yield item


def billing_at(step: int, traj: Trajectory, counted: list[Any], weight: float) -> SessionBilling:
    """The meter setup of calibration step ``step`` (an index of :data:`STEPS`)."""
    if step >= 3:
        billing = session_billing(traj, counted, COUNTER, thinking_weight=weight)
    else:
        billing = session_billing(traj, counted, COUNTER, thinking_weight=1.0, thinking="all")
    cal = billing.calibration
    if step == 0:
        cal = Calibration()
    elif step < 4:
        cal = replace(cal, outputs=(), final=(), output_scale=None)
    return replace(billing, calibration=cal, cache=billing.cache if step >= 2 else VLLM)


def replayed(traj: Trajectory, step: int, weight: float) -> tuple[BilledUsage, list[int]]:
    """Full's usage under step ``step``'s meter, and each call's prompt."""
    counted = traj.counted_steps(COUNTER)
    billing = billing_at(step, traj, counted, weight)
    meter: Meter = billing.meter(PRICE_TABLES["default"], get_profile("qwen3-8b"), COUNTER)
    replay_one(traj, counted, build_strategy("full"), meter, counter=COUNTER)
    return meter.usage, [c.prompt_tokens for c in meter.calls]


def reference(traj: Trajectory) -> tuple[BilledUsage, list[int], dict[str, int]]:
    """The bill (output: final counts, else the calibrated estimate), each call's billed
    prompt, and the output check: on the calls whose final count the log holds, every other
    one billed beside the estimate of the prompt's scale and of the output scale fitted on the
    rest (held out)."""
    counted = traj.counted_steps(COUNTER)
    billing = session_billing(traj, counted, COUNTER)
    assert billing.bill is not None, traj.id
    cal = billing.calibration
    counting = billing.meter(PRICE_TABLES["default"], get_profile("qwen3-8b"), COUNTER).counting
    replies = [counting.reply(s.messages[0], s.tokens[0]) for s in counted if s.kind == "assistant"]
    known = [(cal.outputs[k], r) for k, r in enumerate(replies) if cal.final[k]]
    fit, held = known[0::2], known[1::2]
    scale = output_scale(cal.scale, [r for _, r in fit], [o for o, _ in fit], [True] * len(fit))
    check = {
        "billed": sum(o for o, _ in held),
        "prompt_scale": round(sum(cal.scale * r for _, r in held)),
        "output_scale": round(sum(scale * r for _, r in held)),
    }
    prompts = [c.usage.prompt_tokens for c in traj.calls if c.usage is not None]
    return billing.bill.usage, prompts, check


def errors(billed: dict[str, float], sim: dict[str, float]) -> dict[str, float]:
    return {key: sim[key] / billed[key] - 1 if billed[key] else 0.0 for key, _ in MEASURES}


def measure_set(trajs: list[Trajectory]) -> dict[str, Any]:
    """Every step's errors over the set, the per-session spread of the last, the output check
    and the thinking weights' per-call prompt error."""
    refs = {t.id: reference(t) for t in trajs}
    billed = _total([measures(refs[t.id][0], t.model) for t in trajs])
    out: dict[str, Any] = {"sessions": len(trajs), "calls": sum(len(t.calls) for t in trajs)}
    out["billed"] = billed
    out["steps"] = {}
    for step, name in enumerate(STEPS):
        runs = {t.id: replayed(t, step, THINKING_WEIGHT) for t in trajs}
        sims = {t.id: measures(runs[t.id][0], t.model) for t in trajs}
        out["steps"][name] = errors(billed, _total(list(sims.values())))
    per = [errors(measures(refs[t.id][0], t.model), sims[t.id]) for t in trajs]
    out["spread"] = {k: _spread([e[k] for e in per]) for k in ("prompt_tokens", "cost_usd")}
    out["output_check"] = {k: sum(r[2][k] for r in refs.values()) for k in refs[trajs[0].id][2]}
    out["weights"] = {str(w): _call_error(trajs, refs, w) for w in WEIGHTS}
    return out


def _call_error(trajs: list[Trajectory], refs: dict[str, Any], weight: float) -> float:
    """The mean per-call prompt error (|simulated - billed| / billed) at thinking ``weight``."""
    errs = []
    for t in trajs:
        _usage, prompts = replayed(t, 3, weight)
        errs += [abs(p - b) / b for p, b in zip(prompts, refs[t.id][1], strict=True)]
    return statistics.fmean(errs)


def _total(rows: list[dict[str, float]]) -> dict[str, float]:
    return {key: sum(r[key] for r in rows) for key, _ in MEASURES}


def _spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def report(results: dict[str, dict[str, Any]]) -> None:
    names = [name for _, name in MEASURES]
    for label, res in results.items():
        print(f"\n{label}: {res['sessions']} sessions, {res['calls']:,} calls")
        print(f"{'':18}" + "".join(f"{n[:12]:>13}" for n in names))
        for step, errs in res["steps"].items():
            print(f"{step:18}" + "".join(f"{errs[k]:>+13.1%}" for k, _ in MEASURES))
        for key, s in res["spread"].items():
            print(f"  per session, {key}: median {s['median']:+.1%}, "
                  f"from {s['min']:+.1%} to {s['max']:+.1%}")  # fmt: skip
        o = res["output_check"]
        if o["billed"]:
            print(f"  output of held-out calls with a final count ({o['billed']:,} billed): "
                  f"at the prompt's scale {o['prompt_scale'] / o['billed'] - 1:+.1%}, at the "
                  f"fitted output scale {o['output_scale'] / o['billed'] - 1:+.1%}")  # fmt: skip
        weights = ", ".join(f"{w}: {e:.3%}" for w, e in res["weights"].items())
        print(f"  per-call prompt error by thinking weight: {weights}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    results = {name: measure_set(list(sessions(paths))) for name, paths in sets(args.data).items()}
    report(results)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
