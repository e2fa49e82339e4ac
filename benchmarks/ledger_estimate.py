"""How close serve's ledger comes to what the same calls were billed direct, on the recorded
sessions of the shared sets.

    .venv/bin/python -m benchmarks.ledger_estimate [--set NAME]... [--api messages|responses]...
        [--limit N] [-s STRATEGY] [--data DIR]

Each recorded call is sent twice, as benchmarks/protocol_cost.py sends it (Claude Code's
breakpoints for Messages, Codex's whole input for Responses): direct to one scripted upstream,
and through ``contextfold serve -s STRATEGY`` (in-process, with a store) to another; each
upstream bills what it served from its own prefix cache. Then the proxy's ledger is read back:
its billed total must be the via upstream's bill exactly, and its direct estimate (the client's
conversation through the meter's simulated cache, at each session's token scale) is set beside
the direct upstream's bill, in prompt tokens and in dollars under the API's price table. Under
``-s full`` the two routes send the same prompts, so the difference is the estimate's error.
"""

from __future__ import annotations

import argparse
import tempfile
from contextlib import ExitStack
from pathlib import Path

from rich.console import Console

from benchmarks.protocol_cost import APIS, DATA, SETS, family, measure, routes_for, runs
from contextfold.core.billing import BilledUsage
from contextfold.core.meter import PRICE_TABLES
from contextfold.core.store import open_store
from contextfold.testing.upstreams._cache import Bill


def _billed(bills: list[Bill]) -> BilledUsage:
    out = BilledUsage()
    for b in bills:
        c = b.cached
        out += BilledUsage(c.uncached, c.read, c.written - c.written_1h, c.written_1h, b.output)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", dest="sets", choices=SETS)
    parser.add_argument("--api", action="append", dest="apis", choices=tuple(APIS))
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--limit", type=int, default=None, help="runs per set")
    parser.add_argument("-s", "--strategy", default="full", help="serve's strategy")
    args = parser.parse_args()
    args.serve, args.via, args.restores, args.stream = True, None, False, False
    console = Console(stderr=True)
    sets = {name: runs(args.data, name, args.limit) for name in args.sets or SETS}
    print(f"{'api':10}{'calls':>7}{'measure':>16}{'direct':>14}{'estimate':>14}{'error':>9}")
    print("-" * 70)
    for name in args.apis or list(APIS):
        api, folder = APIS[name], tempfile.mkdtemp()
        args.store = str(Path(folder) / "s.db")
        with ExitStack() as stack:
            routes = routes_for(api, args, stack)
            measure(api, sets, routes, stream=False, console=console)
            direct, via = (_billed(r.upstream.bills) for r in routes)
        with open_store(args.store) as store:
            probe = family("probe")  # the call that checked the route before the run
            entries = [e for e in store.load_ledger() if e.unit != probe]
        billed = sum((e.billed for e in entries), BilledUsage())
        estimate = sum((e.direct for e in entries), BilledUsage())
        assert billed == via, f"the ledger's billed total {billed} is not the bill {via}"
        prices = PRICE_TABLES[api.prices]
        rows = [
            ("prompt tokens", direct.prompt_tokens, estimate.prompt_tokens),
            ("cost $", direct.cost(prices), estimate.cost(prices)),
        ]
        for label, measured, estimated in rows:
            error = estimated / measured - 1 if measured else 0.0
            shown = (
                f"{measured:>14,.0f}{estimated:>14,.0f}"
                if isinstance(measured, int)
                else f"{measured:>14.4f}{estimated:>14.4f}"
            )
            print(f"{name:10}{len(entries):>7,}{label:>16}{shown}{error:>+9.1%}")
    print("ledger billed == via upstream's bill, token by token, on every API: yes")


if __name__ == "__main__":
    main()
