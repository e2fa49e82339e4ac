"""Noisy mode (U-Fold's hard setting): tool outputs padded with distractor records.

The padding comes from the same domain database, is the same for the same call, and never holds
a value the task checks, so it can only make finding the real value harder.
"""

from __future__ import annotations

import json
import random
import zlib
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from pydantic import BaseModel

from contextfold.bench.sufficiency.plan import Plan, build_plan
from contextfold.core.protocols import Environment
from contextfold.core.verbatim import found
from contextfold.envs.tau2 import Tau2Env, list_tasks

__all__ = ["NoisyEnv", "distractors", "table_records"]


@cache
def table_records(domain: str) -> dict[str, tuple[str, ...]]:
    """Every record of the domain's pristine database as JSON text, by table."""
    db = Tau2Env(domain, list_tasks(domain)[0]).tau2_env.tools.db
    tables: dict[str, tuple[str, ...]] = {}
    for name in type(db).model_fields:
        value = getattr(db, name)
        items = list(value.values()) if isinstance(value, dict) else value
        if isinstance(items, list) and items:
            tables[name] = tuple(_json(item) for item in items)
    return tables


def _canonical(arguments: Mapping[str, Any]) -> str:
    return json.dumps(dict(arguments), sort_keys=True)


def _json(item: Any) -> str:
    return item.model_dump_json() if isinstance(item, BaseModel) else json.dumps(item)


@cache
def distractors(domain: str, task_id: str) -> dict[str, tuple[str, ...]]:
    """The records usable as padding for a task: those holding none of its checked values."""
    plan = build_plan(domain, task_id)
    protected = [*plan.checked, *(c for c in plan.communicate if len(c.strip()) >= 3)]
    return {
        name: tuple(r for r in records if not any(found(v, r) for v in protected))
        for name, records in table_records(domain).items()
    }


class NoisyEnv:
    """An environment whose tool outputs carry distractor records.

    Each successful tool output comes back verbatim, followed by records from the same domain
    database, one JSON record per line in the database's own format (other users, reservations,
    orders, flights, customers and lines), until the padding is ``factor`` times the output's
    length (at least one record). The records come from the table whose records share the most keys
    with the output (``get_user_details`` -> users, a flight search -> flights), else from any
    table. A call's records are drawn with a seed made from the task, the tool and its arguments,
    so a repeated read returns the same text, as a real system would. No record holding one of the
    plan's checked values or ``communicate_info`` items is used, so the padding never makes a
    missing value look available. Errors are not padded. :attr:`originals` maps each padded output
    back to the real one, for the evaluator (it replays every call and checks the outputs).
    """

    def __init__(self, env: Environment, plan: Plan, *, factor: float = 3.0) -> None:
        self.env, self.plan, self.factor = env, plan, factor
        self.pools = {k: v for k, v in distractors(plan.domain, plan.task_id).items() if v}
        self.keys = {name: set(json.loads(recs[0])) for name, recs in self.pools.items()}
        self.originals: dict[str, str] = {}
        """Each padded output -> the output itself (the evaluator replays the real ones)."""

    def tools(self) -> Sequence[Mapping[str, Any]]:
        """The wrapped environment's tools."""
        return self.env.tools()

    def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        """Run the tool on the real env; pad a successful output."""
        output = self.env.call(name, arguments)
        if output.startswith("Error") or not self.pools:
            return output
        padded = self.pad(output, f"{self.plan.task_id}:{name}:{_canonical(arguments)}")
        self.originals[padded] = output
        return padded

    def pad(self, output: str, seed: str) -> str:
        """``output`` followed by distractor records, about ``factor`` times its length."""
        pool = self.pools[self._table(output)]
        rng = random.Random(zlib.crc32(seed.encode()))
        target, lines = self.factor * len(output), list[str]()
        size = 0
        while size < target or not lines:
            record = pool[rng.randrange(len(pool))]
            lines.append(record)
            size += len(record) + 1
        return output + "\n" + "\n".join(lines)

    def _table(self, output: str) -> str:
        """The table whose records share the most keys with the output's (first) record."""
        try:
            data = json.loads(output)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, list) and data:
            data = data[0]
        keys = set(data) if isinstance(data, dict) else set()
        return max(self.pools, key=lambda name: len(keys & self.keys[name]))
