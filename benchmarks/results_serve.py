"""The page of ``results.py`` that runs the proxy: ``protocol_cost.py`` on both recorded sets,
as Anthropic Messages and OpenAI Responses requests, through ``serve -s refold``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import results_md as md
from results_md import COMMAND

SETS = ("tau2-sierra", "mini-swe-agent-dev")
SHORT = {"tau2-sierra": "tau2", "mini-swe-agent-dev": "SWE"}
PRICES = {"messages": "default", "responses": "openai"}


def serve_page(data: Path) -> md.Page:
    page = md.Page(
        "serve",
        "The proxy, end to end",
        "Every recorded call of both sets sent as the agent CLIs send theirs "
        "(`benchmarks/protocol_cost.py --serve -s refold --replay`): as Anthropic Messages "
        "requests with Claude Code's breakpoints and as Codex's stateless Responses requests, "
        "once straight to a scripted upstream of the API and once through `contextfold serve "
        "-s refold` to another, each answering with the recorded turn and billing from its "
        "own prefix cache the way its provider does (Anthropic's: read only through a "
        "breakpoint, reads 0.1x, writes 1.25x, the `default` table; OpenAI's: automatic, "
        "reads 0.25x, the `openai` table). The recorded runs are in `../shared/data`, beside "
        "the repository ([where they come from](index.md#the-recorded-runs)): tau2 is "
        "`tau2-sierra`, SWE `mini-swe-agent-dev`.",
        [data / name for name in SETS],
        f"{COMMAND} --only serve",
    )
    found = _run(data)
    page.section("cost", _table(found))
    page.text(
        "direct $, via $: what the upstream billed for the calls sent straight and through "
        "the proxy; via/direct: the second as a multiple of the first; replay, no restores: "
        "what `contextfold replay` reports for refold against full on the same runs under "
        "the API's price table, with its restores priced (its default) and without. Here no "
        "call through the proxy restores anything (the upstream answers with the recorded "
        "turn), so via/direct is to be read beside the second."
    )
    page.text("## With restores")
    page.text(
        "The same, the proxy's model now restoring what replay's would (`--restores`): "
        "before each recorded turn it reads the view the proxy sent, and for each value the "
        "recorded call uses that the view left out but a stub gives back, it calls `restore` "
        "on the stub that gives it back in the fewest characters; the proxy answers and calls "
        "it again, and it gives the recorded turn. via/direct is to be read beside replay's "
        "figure with its restores priced. A restore through the proxy lasts one turn (the "
        "client's next request does not hold it), where replay keeps the restored step in "
        "the history: the proxy restores more often, and carries less. restores: the "
        "restore calls the proxy's model made."
    )
    page.section("restores", _table(_run(data, "--restores"), restores=True))
    return page


def _run(data: Path, *more: str) -> dict[str, Any]:
    root = Path(__file__).resolve().parents[1]
    # the code at hand first (src/), whichever package the venv's editable install points at
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root)])}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cost.json"
        argv = [sys.executable, "-m", "benchmarks.protocol_cost", "--serve", "-s", "refold"]
        argv += ["--replay", "--data", str(data), "--json", str(out), *more]
        subprocess.run(argv, check=True, cwd=root, env=env, stdout=subprocess.DEVNULL)
        found: dict[str, Any] = json.loads(out.read_text())
    return found


def _table(found: dict[str, Any], restores: bool = False) -> str:
    rows = []
    for api, per_set in found["results"].items():
        prices = PRICES[api]
        for name, routes in per_set.items():
            direct = routes["direct"]["cost_usd"][prices]
            via = routes["via"]["cost_usd"][prices]
            priced, unpriced = found["replay"][f"refold {name} {prices}"]
            cells = [f"{direct:,.2f}", f"{via:,.2f}", md.ratio(via, direct)]
            last = f"{routes['via']['restores']:,}" if restores else f"{unpriced:.3f}"
            rows.append([SHORT[name], api, *cells, f"{priced:.3f}", last])
    last_head = "restores" if restores else "no restores"
    heads = ["set", "API", "direct $", "via $", "via/direct", "replay", last_head]
    return md.table(heads, rows)
