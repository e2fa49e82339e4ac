"""What the recorded sessions cost sent through a proxy, as a multiple of sending them direct,
as Anthropic Messages and as OpenAI Responses requests.

    .venv/bin/python -m benchmarks.protocol_cost [--set NAME]... [--api messages|responses]...
        [--limit N] [--stream] [--serve [-s refold] | --via URL --upstream-port PORT]
        [--replay] [--restores] [--data DIR] [--json out.json]

The runs of both shared sets (``tau2-sierra``, ``mini-swe-agent-dev``; ``--limit`` runs each)
are sent call by call: before each recorded assistant turn, the conversation so far, as the
agent CLIs shape it (benchmarks/_wire.py: Claude Code's breakpoints on the system prompt and
the newest block for Messages, Codex's stateless whole input for Responses). Each call is sent
twice, to two scripted upstreams of the API (contextfold.testing.upstreams.anthropic, ..._responses)
that answer with the recorded turn: one direct, one through the proxy. Each upstream bills
what it served from its own prefix cache, counting the prompt as the model reads it and the
reply as it generates it (contextfold.testing.upstreams._prompt): Anthropic's (read only up to a
breakpoint, reads 0.1x and writes 1.25x the input price: price table ``default``) and OpenAI's
(automatic, reads 0.25x: ``openai``). The table gives each route's cost and via/direct per set
and API.

Routes: without a proxy only direct is measured. ``--serve`` starts ``contextfold serve -s
STRATEGY`` in-process (upstream ``anthropic:`` or ``responses:`` the via upstream), for a serve
that answers these routes. ``--via URL`` sends the via route to a proxy already running at URL
(its root, without ``/v1``), which must forward to the via upstream this script starts on
127.0.0.1:``--upstream-port``, so it takes one ``--api``; ``--via`` pointed at that upstream
itself checks the harness (via/direct is then 1 exactly). ``--replay`` adds what ``contextfold
replay`` reports for the strategy against ``full`` on the same runs, with its restores priced
(its default) and without: the scripted upstreams answer with the recorded turn, so no call
through the proxy restores anything, and the figure to compare via/direct with is the second;
unless ``--restores`` (with ``--serve``) has the via route's model restore what replay's would
(benchmarks/_restoring.py), and then it is the first.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from benchmarks._restoring import Restorer
from benchmarks._wire import (
    anthropic_reply,
    messages_body,
    responses_body,
    responses_reply,
    tool_names,
)
from contextfold.bench.report import progress_bar
from contextfold.core.messages import to_openai
from contextfold.core.meter import PRICE_TABLES
from contextfold.importers import iter_trajectories
from contextfold.importers.base import Trajectory
from contextfold.testing.upstreams.anthropic import ScriptedAnthropic
from contextfold.testing.upstreams.responses import ScriptedResponses

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SETS = ("tau2-sierra", "mini-swe-agent-dev")
Chat = list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Api:
    """How one API is sent, answered and priced."""

    name: str
    upstream: Callable[..., ScriptedAnthropic | ScriptedResponses]
    body: Callable[..., dict[str, Any]]
    reply: Callable[[dict[str, Any]], Any]
    path: str
    prices: str
    headers: dict[str, str]
    kind: str
    """The upstream kind of ``contextfold serve --upstream KIND:URL``."""


APIS = {
    "messages": Api(
        "messages",
        ScriptedAnthropic,
        messages_body,
        anthropic_reply,
        "/v1/messages",
        "default",
        {"x-api-key": "bench", "anthropic-version": "2023-06-01"},
        "anthropic",
    ),
    "responses": Api(
        "responses",
        ScriptedResponses,
        responses_body,
        responses_reply,
        "/v1/responses",
        "openai",
        {"authorization": "Bearer bench"},
        "responses",
    ),
}


class Next:
    """The scripted upstreams' reply function: whatever the harness set for the next call,
    after what ``first`` gives for the request's first call (its restores), if anything."""

    def __init__(self) -> None:
        self.reply: Any = "ok"
        self.first: Callable[[], Any] | None = None

    def __call__(self, body: dict[str, Any]) -> Any:
        first, self.first = self.first, None
        restores = first() if first is not None else None
        return self.reply if restores is None else restores


@dataclass(slots=True)
class Route:
    """Where one route's requests go (``url``: a root without ``/v1``) and who bills them."""

    name: str
    url: str
    upstream: Any
    next: Next
    restorer: Restorer | None = None
    """The via route's, with ``--restores``: the restores its scripted model makes."""


@dataclass(slots=True)
class Figures:
    calls: int = 0
    cost: dict[str, float] = field(default_factory=dict)
    read_share: dict[str, float] = field(default_factory=dict)
    restores: int = 0
    """Restore calls the route's scripted model made (``--restores``)."""


def runs(data: Path, name: str, limit: int | None) -> list[Trajectory]:
    items = [t for t in iter_trajectories([data / name]) if isinstance(t, Trajectory)]
    return items[: limit or None]


def calls(traj: Trajectory) -> Iterator[tuple[int, Chat, dict[str, Any]]]:
    """(the step index, the conversation before each recorded assistant turn, that turn), in
    order."""
    conversation: Chat = []
    for i, step in enumerate(traj.steps):
        messages = [to_openai(m) for m in step]
        if messages[0]["role"] == "assistant" and conversation:
            yield i, list(conversation), messages[0]
        conversation += messages


def family(session: str) -> str:
    """The session header's value: trajectory ids hold characters it refuses (``@``)."""
    return hashlib.blake2b(session.encode(), digest_size=12).hexdigest()


def send(http: httpx.Client, api: Api, route: Route, body: dict[str, Any], session: str) -> None:
    headers = {**api.headers, "x-contextfold-session": family(session)}
    url = route.url + api.path
    with http.stream("POST", url, json=body, headers=headers) as reply:
        raw = reply.read()
    if reply.status_code != 200:
        text = raw.decode(errors="replace")[:300]
        raise SystemExit(f"{route.name} ({url}) answered {reply.status_code}: {text}")


def measure(
    api: Api,
    sets: dict[str, list[Trajectory]],
    routes: list[Route],
    *,
    stream: bool,
    console: Console,
) -> dict[str, dict[str, Figures]]:
    out: dict[str, dict[str, Figures]] = {}
    total = sum(1 for trajs in sets.values() for t in trajs for _ in calls(t))
    with progress_bar(console) as bar, httpx.Client(timeout=600) as http:
        task = bar.add_task(f"{api.name} calls", total=total)
        for name, trajs in sets.items():
            marks = {r.name: len(r.upstream.bills) for r in routes}
            made = {r.name: r.restorer.calls if r.restorer else 0 for r in routes}
            count = 0
            for traj in trajs:
                system = to_openai(traj.system)["content"] if traj.system else None
                tools = tool_names([to_openai(m) for step in traj.steps for m in step])
                for route in routes:
                    if route.restorer is not None:
                        route.restorer.start(traj, family(f"{name}:{traj.id}"))
                for step, conversation, turn in calls(traj):
                    body = api.body(system, conversation, tools, stream=stream)
                    for route in routes:
                        route.next.reply = api.reply(turn)
                        if route.restorer is not None:
                            route.next.first = partial(route.restorer.reply, step)
                        send(http, api, route, body, f"{name}:{traj.id}")
                    count += 1
                    bar.advance(task)
            out[name] = {
                r.name: _figures(api, r.upstream.bills[marks[r.name] :], count) for r in routes
            }
            for r in routes:
                if r.restorer is not None:
                    out[name][r.name].restores = r.restorer.calls - made[r.name]
    return out


def _figures(api: Api, bills: list[Any], count: int) -> Figures:
    cost = {api.prices: sum(b.cost(PRICE_TABLES[api.prices]) for b in bills)}
    read = sum(b.cached.read for b in bills)
    total = sum(b.cached.total for b in bills) or 1
    return Figures(calls=count, cost=cost, read_share={api.prices: read / total})


def routes_for(api: Api, args: argparse.Namespace, stack: ExitStack) -> list[Route]:
    direct = Next()
    up = stack.enter_context(api.upstream(direct))
    routes = [Route("direct", up.root, up, direct)]
    if args.serve or args.via:
        via = Next()
        port = args.upstream_port if args.via else 0
        behind = api.upstream(via, port=port)
        stack.enter_context(behind)
        proxy = None if args.via else serve(api, behind, args, stack)
        url = args.via.rstrip("/").removesuffix("/v1") if args.via else proxy_root(proxy)
        restorer = Restorer(proxy.proxy.manager, api.name) if proxy and args.restores else None
        routes.append(Route("via", url, behind, via, restorer))
        probe(api, routes[1])
    return routes


def serve(
    api: Api,
    upstream: ScriptedAnthropic | ScriptedResponses,
    args: argparse.Namespace,
    stack: ExitStack,
) -> Any:
    """Starts ``contextfold serve`` in-process in front of ``upstream``; its ProxyThread."""
    from contextfold.serve import ServeConfig
    from contextfold.serve.runner import ProxyThread

    store = getattr(args, "store", None)  # benchmarks.ledger_estimate reads its ledger
    config = ServeConfig(
        upstream=f"{api.kind}:{upstream.url}", strategy=args.strategy, no_auth=True, store=store
    )
    try:
        proxy = stack.enter_context(ProxyThread(config))
    except Exception as e:  # this serve does not take the upstream kind yet
        raise SystemExit(
            f"this contextfold serve cannot take --upstream {api.kind}:URL: {e}"
        ) from e
    return proxy


def proxy_root(proxy: Any) -> str:
    return str(proxy.url).removesuffix("/v1")


def probe(api: Api, route: Route) -> None:
    """One small call through the via route, so a proxy that does not serve the API's route
    stops the run at once (its bill is left out)."""
    first = [{"role": "user", "content": "probe"}]
    with httpx.Client(timeout=60) as http:
        send(http, api, route, api.body("You answer.", first, []), "probe")
    route.upstream.bills.clear()


def replay_cut(
    data: Path, name: str, strategy: str, limit: int | None, prices: str, restores: bool
) -> float:
    """``contextfold replay``'s cost of ``strategy`` as a multiple of ``full`` on the set."""
    cli = Path(sys.executable).parent / "contextfold"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "replay.json"
        argv = [str(cli), "replay", str(data / name), "-s", "full", "-s", strategy]
        argv += ["--prices", prices, "--json", str(out)] + (
            ["--limit", str(limit)] if limit else []
        )
        argv += [] if restores else ["--no-restore-pricing"]
        subprocess.run(argv, check=True, capture_output=True, text=True)
        result: dict[str, Any] = json.loads(out.read_text())
    return float(result[strategy]["cost_usd"]) / float(result["full"]["cost_usd"])


def table(
    results: dict[str, dict[str, dict[str, Figures]]], cuts: dict[str, tuple[float, ...]]
) -> list[str]:
    head = f"{'set':19}{'api':10}{'calls':>7}{'direct $':>11}{'via $':>11}{'via/dir':>8}"
    rows = [head + f"{'read% d':>8}{'read% v':>8}", "-" * 80]
    for api, per_set in results.items():
        table_name = APIS[api].prices
        for name, routes in per_set.items():
            d, v = routes["direct"], routes.get("via")
            figures = f"{d.calls:>7,}{d.cost[table_name]:>11.4f}"
            if v is None:
                figures += f"{'-':>11}{'-':>8}{100 * d.read_share[table_name]:>8.1f}{'-':>8}"
            else:
                ratio = v.cost[table_name] / d.cost[table_name]
                figures += f"{v.cost[table_name]:>11.4f}{ratio:>8.3f}"
                figures += f"{100 * d.read_share[table_name]:>8.1f}"
                figures += f"{100 * v.read_share[table_name]:>8.1f}"
            rows.append(f"{name[:18]:19}{api:10}{figures}")
    for api, per_set in results.items():
        for name, routes in per_set.items():
            via = routes.get("via")
            if via is not None and via.restores:
                rows.append(f"{name} {api}: the via route's model made {via.restores:,} restores")
    for key, (priced, unpriced) in cuts.items():
        rows.append(f"replay {key}: {priced:.3f}x full, {unpriced:.3f}x without restores")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--set", action="append", dest="sets", choices=SETS, help="a set (default: both)"
    )
    parser.add_argument(
        "--api", action="append", dest="apis", choices=tuple(APIS), help="default: both"
    )
    parser.add_argument("--data", type=Path, default=DATA, help="the recorded runs' folder")
    parser.add_argument("--limit", type=int, default=None, help="runs per set")
    parser.add_argument("--stream", action="store_true", help="send stream: true")
    parser.add_argument("--serve", action="store_true", help="start contextfold serve")
    parser.add_argument("-s", "--strategy", default="refold", help="serve's strategy")
    parser.add_argument("--via", default=None, help="a running proxy's root URL")
    parser.add_argument(
        "--upstream-port", type=int, default=8765, help="the via upstream's port, for --via"
    )
    parser.add_argument(
        "--replay", action="store_true", help="add replay's figures for the strategy"
    )
    parser.add_argument(
        "--restores",
        action="store_true",
        help="with --serve: the via route's model restores what replay would have it restore",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    apis = args.apis or list(APIS)
    if args.via and (args.serve or len(apis) != 1):
        parser.error("--via fronts one API's upstream: give one --api, and not --serve")
    console = Console(stderr=True)
    sets = {name: runs(args.data, name, args.limit) for name in args.sets or SETS}
    results = {}
    for name in apis:
        with ExitStack() as stack:
            routes = routes_for(APIS[name], args, stack)
            results[name] = measure(APIS[name], sets, routes, stream=args.stream, console=console)
    cuts: dict[str, tuple[float, ...]] = {}
    if args.replay:
        for name in sets:
            for prices in ("default", "openai"):
                cuts[f"{args.strategy} {name} {prices}"] = tuple(
                    replay_cut(args.data, name, args.strategy, args.limit, prices, restores)
                    for restores in (True, False)
                )
    for line in table(results, cuts):
        print(line)
    if args.json:
        plain = {
            a: {s: {r: vars_of(f) for r, f in rs.items()} for s, rs in per.items()}
            for a, per in results.items()
        }
        args.json.write_text(json.dumps({"results": plain, "replay": cuts}, indent=2))


def vars_of(figures: Figures) -> dict[str, Any]:
    return {
        "calls": figures.calls,
        "cost_usd": figures.cost,
        "read_share": figures.read_share,
        "restores": figures.restores,
    }


if __name__ == "__main__":
    main()
