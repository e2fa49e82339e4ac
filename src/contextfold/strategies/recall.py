"""``recall``: move old observations to an archive the agent can search (ReFold's B.1 baseline).

Nothing is lost (``recall`` reads the history), and an archived output stays archived, so the
prefix changes only in bursts and the cache keeps hitting between them.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from contextfold.core.history import History
from contextfold.core.messages import Message, ToolMessage
from contextfold.core.view import RestorePath, View
from contextfold.strategies.base import StrategyConfig
from contextfold.strategies.transform import Edit, TransformStrategy, rewrite, tool_stub

__all__ = ["RECALL_TOOL", "RecallConfig", "RecallStrategy"]

STUB = (
    "[output of step {step} moved to the archive as #{step}; call recall(id={step}) to see "
    "it, or recall(query=...) to search]"
)

RECALL_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "recall",
        "description": (
            "Get back a tool output that was moved to the archive. Give `id` (the number in "
            "the stub) to see that output verbatim, or `query` to search all archived outputs."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "id": {"type": "integer", "description": "Archive id, as in '#12'."},
                "query": {"type": "string", "description": "Words to look for."},
            },
            "additionalProperties": False,
        },
    },
}
"""The OpenAI schema of the ``recall`` tool."""


class RecallConfig(StrategyConfig):
    type: Literal["recall"] = "recall"
    budget: int = Field(32000, ge=1, description="Budget in tokens when render gets none.")
    trigger: float = Field(0.75, gt=0.0, le=1.0, description="Archive above this share.")
    target: float = Field(0.5, ge=0.0, le=1.0, description="Archive down to this share.")
    keep: int = Field(1, ge=0, description="Latest observation steps never archived.")
    results: int = Field(5, ge=1, description="Archived outputs a query lists at most.")
    lines: int = Field(3, ge=1, description="Matching lines shown per listed output.")


class RecallStrategy(TransformStrategy):
    """Archives the oldest observations past the trigger; a ``recall`` tool gets them back.

    When the view grows past ``trigger`` (75%) of the budget, the oldest observations (all tool
    results of a step, oldest step first) move to a per-session archive until the view is under
    ``target`` (50%). Each is replaced by a stub naming its archive id (its step) and the
    ``recall`` tool: ``recall(id=S)`` gives the output back verbatim and ``recall(query=...)``
    lists the archived outputs whose lines hold the query's terms. The observations of the last
    ``keep`` steps that have any are never archived, so the agent always sees what its latest
    action returned.
    """

    Config = RecallConfig

    def __init__(self, config: RecallConfig | None = None) -> None:
        super().__init__()
        self.config = config or RecallConfig()
        self.name = "recall"
        self._history: History | None = None
        self.archived: dict[int, None] = {}
        """Archived step indices (the archive ids), in the order they were archived."""
        self._edits: dict[tuple[int, ToolMessage], Edit] = {}

    def apply(self, view: View, history: History, budget: int | None) -> View:
        if history is not self._history:  # the archive belongs to one session
            self._history, self.archived, self._edits = history, {}, {}
        slots = _observation_slots(view)
        self._archive_more(view, history, slots, budget or self.config.budget)
        edits = {}
        for step in self.archived:
            for pos in slots.get(step, ()):
                edits[pos] = self._edit(step, view.messages[pos])
        return rewrite(view, edits, history, strategy=self.name)

    def _archive_more(
        self, view: View, history: History, slots: dict[int, list[int]], limit: int
    ) -> None:
        """Archive the oldest open observations while the view is over the target share."""

        def saving(step: int) -> int:
            stubs = ((p, self._edit(step, view.messages[p]).message) for p in slots[step])
            return sum(view.tokens[p] - history.count(m) for p, m in stubs if m is not None)

        total = view.total_tokens - sum(saving(s) for s in self.archived if s in slots)
        if total <= self.config.trigger * limit:
            return
        for step in list(slots)[: max(len(slots) - self.config.keep, 0)]:
            if total <= self.config.target * limit:
                break
            gain = 0 if step in self.archived else saving(step)
            if gain > 0:  # a stub longer than the output would only grow the view
                self.archived[step] = None
                total -= gain

    def _edit(self, step: int, message: Message) -> Edit:
        assert isinstance(message, ToolMessage)
        key = (step, message)
        if key not in self._edits:
            stub = tool_stub(message, STUB.format(step=step))
            self._edits[key] = Edit(stub, "recall", RestorePath("recall", (("id", step),)))
        return self._edits[key]

    def tools(self) -> list[dict[str, Any]]:
        """The ``recall`` tool's schema."""
        return [copy.deepcopy(RECALL_TOOL)]

    def call_tool(self, name: str, arguments: Mapping[str, Any], history: History) -> str:
        """Run ``recall``: an archived output by ``id``, or a search by ``query``. Bad
        arguments give an error text naming the problem; nothing raises."""
        if name != "recall":
            return f"error: unknown tool {name!r}; this strategy offers only 'recall'"
        if not isinstance(arguments, Mapping):
            return "error: recall takes an object with 'id' (integer) or 'query' (string)"
        extra = sorted(set(arguments) - {"id", "query"})
        if extra:
            return f"error: recall got unknown arguments {extra}; give 'id' or 'query'"
        given = [k for k in ("id", "query") if arguments.get(k) is not None]
        if len(given) != 1:
            return "error: give exactly one of 'id' (integer) or 'query' (string) to recall"
        if given == ["id"]:
            return _by_id(arguments["id"], history)
        archived = self.archived if history is self._history else {}
        return _search(arguments["query"], history, archived, self.config)


def _observation_slots(view: View) -> dict[int, list[int]]:
    """View positions of each step's tool results, steps in order of appearance."""
    slots: dict[int, list[int]] = {}
    for pos, (msg, prov) in enumerate(zip(view.messages, view.provenance, strict=True)):
        if isinstance(msg, ToolMessage) and len(prov.steps) == 1:
            slots.setdefault(prov.steps[0], []).append(pos)
    return slots


def _by_id(value: object, history: History) -> str:
    """The outputs of step ``value``, verbatim."""
    text = str(value).strip().lstrip("#")
    if isinstance(value, bool) or not isinstance(value, int | str) or not text.isdigit():
        return f"error: recall id must be an integer archive id such as 12, got {value!r}"
    step = int(text)
    if step >= len(history):
        return f"error: there is no #{step}; ids are step numbers below {len(history)}"
    results = history[step].results
    if not results:
        return f"error: step {step} has no tool output to recall"
    if len(results) == 1:
        return results[0].content
    return "\n".join(
        f"[#{step}, output {k} of {len(results)}: {r.name or r.tool_call_id}]\n{r.content}"
        for k, r in enumerate(results, 1)
    )


def _search(
    query: object, history: History, archived: Mapping[int, None], cfg: RecallConfig
) -> str:
    """The archived outputs holding the most query terms, with their matching lines."""
    terms = re.findall(r"\w+", query.lower()) if isinstance(query, str) else []
    if not terms:
        return f"error: recall query must be a string with words to look for, got {query!r}"
    if not archived:
        return "nothing is archived yet"
    found = []
    for step in archived:
        text = "\n".join(r.content for r in history[step].results)
        lines = [(n, ln) for n, ln in enumerate(text.splitlines(), 1) if _hits(ln, terms)]
        if lines:
            found.append((-len({t for t in terms if t in text.lower()}), -len(lines), step, lines))
    if not found:
        ids = ", ".join(f"#{s}" for s in archived)
        return f"no archived output matches {query!r} (archived: {ids})"
    out = []
    for _, count, step, lines in sorted(found)[: cfg.results]:
        out.append(f"#{step}: {-count} matching line{'s' * (count != -1)}")
        out.extend(f"  {n}: {ln.strip()[:200]}" for n, ln in lines[: cfg.lines])
    return "\n".join(out)


def _hits(line: str, terms: list[str]) -> bool:
    low = line.lower()
    return any(t in low for t in terms)
