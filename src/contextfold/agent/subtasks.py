"""``subtask-fold``: the context-folding agent tutorial's agent mode.

Decompose the task, solve each subtask with tools in a history of its own, fold each into a
short summary, answer from the summaries: a subtask's raw tool traffic reaches no later prompt.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from contextfold.agent.loop import Agent, StopReason
from contextfold.core.errors import ConfigError
from contextfold.core.folds import FoldCall, FoldRecord
from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage, Message, SystemMessage, UserMessage
from contextfold.core.meter import Meter
from contextfold.core.protocols import Environment, Model
from contextfold.core.tokens import TokenCounter
from contextfold.strategies.full import FullStrategy

__all__ = ["SubtaskAgent", "SubtaskRecord", "SubtaskResult", "parse_subtasks"]

PLAN_SYSTEM = "You are a planner. You break a task into a few short, concrete steps."
PLAN_USER = (
    "Task: {task}\n\nBreak this task into 2 to {most} subtasks that together solve it. "
    "Answer with a numbered list only, one subtask per line:\n1. ...\n2. ..."
)
STEP_SYSTEM = (
    "You solve one subtask of a larger task. Use the tools for every calculation. "
    "When the subtask is done, reply with its result in one or two sentences."
)
FOLD_SYSTEM = "You write very short summaries of finished work."
FOLD_USER = (
    "Subtask: {subtask}\n\nWork log:\n{log}\n\nSummarize the outcome in 1-2 sentences. "
    "Keep every number and name the final answer needs."
)
ANSWER_SYSTEM = "You write the final answer to a task from the results of its subtasks."
ANSWER_USER = (
    "Task: {task}\n\nResults of the subtasks:\n{summaries}\n\n"
    "Write the final answer to the task, using only these results."
)
_PLAN_TOKENS, _FOLD_TOKENS, _ANSWER_TOKENS = 200, 120, 400
_ITEM_CHARS, _LOG_CHARS = 300, 4000

_MARK = r"^[\s#*_]*(?:(?:step|subtask)\s*)?\(?\d{1,2}\s*[.):\]](?!\d)\s*"
_NUMBERED = re.compile(_MARK + r"(.*?)\s*$", re.IGNORECASE)
_BULLET = re.compile(r"^\s*[-*\u2022]\s+(.+?)\s*$")


def parse_subtasks(text: str | None) -> list[str]:
    """The items of the numbered list in ``text`` (``1.``, ``2)``, ``Step 3:``), or of its
    bullet list if it has no numbered items; markdown emphasis stripped, duplicates dropped.

    A number alone on its line takes the next line as its text (small models write that).
    """
    lines = (text or "").splitlines()
    for pattern in (_NUMBERED, _BULLET):
        items: list[str] = []
        pending = False
        for line in lines:
            match = pattern.match(line)
            if match is None and not (pending and line.strip()):
                continue
            item = _clean(match.group(1) if match else line, pattern)
            pending = match is not None and not item
            if item and item not in items:
                items.append(item)
        if items:
            return items
    return []


def _clean(item: str, pattern: re.Pattern[str]) -> str:
    """An item's text without repeated markers (``1. 1. x``) or emphasis, capped."""
    while (inner := pattern.match(item)) is not None:
        item = inner.group(1)
    return item.strip("*_ ").strip()[:_ITEM_CHARS]


@dataclass(slots=True)
class SubtaskRecord:
    """One solved subtask: what it was, its fold, and its own (unfolded) history."""

    subtask: str
    summary: str
    answer: str
    """The subtask loop's last reply text ('' if it ended on the step cap)."""
    stop: StopReason
    tool_calls: int
    tool_errors: int
    history: History


@dataclass(slots=True)
class SubtaskResult:
    """The outcome of :meth:`SubtaskAgent.run` and what it cost."""

    task: str
    meter: Meter
    answer: str = ""
    plan: str = ""
    """The model's raw decomposition reply."""
    subtasks: list[SubtaskRecord] = field(default_factory=list)
    malformed: int = 0
    """Model outputs that did not follow the format asked for (and were degraded)."""
    notes: list[str] = field(default_factory=list)
    """One line per malformed output: what was wrong and what was done instead."""
    truncated_summaries: int = 0
    runtime_calls: int = 0
    runtime_tokens: int = 0
    """Tokens of this run's decomposition, folding and synthesis calls."""

    @property
    def summaries(self) -> list[str]:
        return [r.summary for r in self.subtasks]

    def counts(self) -> dict[str, int]:
        """This run's counts, JSON-ready (the meter holds the token totals)."""
        return {
            "subtasks": len(self.subtasks),
            "summaries": sum(1 for r in self.subtasks if r.summary),
            "truncated_summaries": self.truncated_summaries,
            "malformed": self.malformed,
            "tool_calls": sum(r.tool_calls for r in self.subtasks),
            "tool_errors": sum(r.tool_errors for r in self.subtasks),
            "agent_calls": sum(
                1 for r in self.subtasks for s in r.history if s.kind == "assistant"
            ),
            "runtime_calls": self.runtime_calls,
            "runtime_tokens": self.runtime_tokens,
        }


class SubtaskAgent:
    """Decompose, solve each subtask with tools, fold each into a summary, synthesize.

    Every run accounts on :attr:`meter` (the one given, or a new one). ``max_tokens`` caps each
    subtask call's reply; ``counter`` counts the subtask histories' tokens (approximate by
    default).

    One run: (a) the model decomposes the task into 2..``max_subtasks`` subtasks (a numbered list;
    output with fewer than two items falls back to one subtask, the whole task, and is counted as
    malformed; extra items are merged into the last, and a reply cut off at its token cap loses its
    last item); (b) each subtask runs a short tool loop (:class:`~contextfold.agent.Agent`,
    ``steps_per_subtask`` model calls at most) on a fresh History whose user message carries the
    task, the summaries of the earlier subtasks and the current subtask; (c) the finished subtask
    is folded: the model sums up its work log in 1-2 sentences (capped at ``summary_chars``; an
    empty summary falls back to the subtask's own answer and is counted); (d) the final answer is
    synthesized from the summaries only (no tools).

    Subtask calls go on the meter as agent calls (``meter.calls``); decomposition, folding and
    synthesis as folder calls (``meter.folds``: the fold figures).
    """

    def __init__(
        self,
        model: Model,
        env: Environment,
        *,
        max_subtasks: int = 4,
        steps_per_subtask: int = 6,
        meter: Meter | None = None,
        max_tokens: int | None = None,
        summary_chars: int = 300,
        counter: TokenCounter | None = None,
    ) -> None:
        if max_subtasks < 2 or steps_per_subtask < 1 or summary_chars < 20:
            raise ConfigError(
                "SubtaskAgent needs max_subtasks >= 2, steps_per_subtask >= 1 and "
                f"summary_chars >= 20; got {max_subtasks}, {steps_per_subtask}, {summary_chars}"
            )
        self.model, self.env = model, env
        self.max_subtasks, self.steps_per_subtask = max_subtasks, steps_per_subtask
        self.meter = meter if meter is not None else Meter()
        self.max_tokens, self.summary_chars, self.counter = max_tokens, summary_chars, counter

    def run(self, task: str) -> SubtaskResult:
        """Solve ``task`` by subtasks; the answer is synthesized from their summaries alone."""
        result = SubtaskResult(task, self.meter)
        subtasks = self._decompose(task, result)
        for subtask in subtasks:
            record = self._solve(task, subtask, subtasks, result.summaries)
            record.summary = self._fold(record, result)
            result.subtasks.append(record)
        result.answer = self._synthesize(task, result)
        return result

    # ------------------------------------------------------------------ the four phases

    def _decompose(self, task: str, result: SubtaskResult) -> list[str]:
        prompt = PLAN_USER.format(task=task, most=self.max_subtasks)
        result.plan, cut = self._aux(PLAN_SYSTEM, prompt, _PLAN_TOKENS, result, kind="decompose")
        items = parse_subtasks(result.plan)
        if cut and items:  # the reply ran into max_tokens: its last item may be cut off
            items.pop()
        if len(items) < 2:
            _malformed(result, f"plan: {len(items)} usable items; solved the task as one subtask")
            return [task]
        if len(items) > self.max_subtasks:
            _malformed(result, f"plan: {len(items)} items; merged the extra ones into the last")
            last = self.max_subtasks - 1
            items = [*items[:last], "; then ".join(items[last:])]
        elif cut:
            _malformed(result, "plan: cut off at max_tokens; dropped its last item")
        return items

    def _solve(
        self, task: str, subtask: str, subtasks: Sequence[str], summaries: Sequence[str]
    ) -> SubtaskRecord:
        history = History(SystemMessage(STEP_SYSTEM), counter=self.counter)
        agent = Agent(
            self.model,
            FullStrategy(),
            self.env,
            history=history,
            meter=self.meter,
            max_steps=self.steps_per_subtask,
            max_tokens=self.max_tokens,
        )
        position = f"{len(summaries) + 1} of {len(subtasks)}"
        done = _numbered(summaries) if summaries else "nothing yet."
        prompt = (
            f"Task: {task}\n\nDone so far:\n{done}\n\nCurrent subtask ({position}): {subtask}\n"
            "Do only the current subtask, then reply with its result."
        )
        run = agent.run(prompt)
        last = history.steps[-1].message
        answer = (last.content or "").strip() if run.stop == "answered" else ""
        return SubtaskRecord(
            subtask, "", answer, run.stop, run.tool_calls, run.tool_errors, history
        )

    def _fold(self, record: SubtaskRecord, result: SubtaskResult) -> str:
        prompt = FOLD_USER.format(subtask=record.subtask, log=_work_log(record.history))
        summary, _ = self._aux(FOLD_SYSTEM, prompt, _FOLD_TOKENS, result, kind="subtask")
        if not summary:
            _malformed(result, f"fold: empty summary of {record.subtask[:60]!r}; kept its answer")
            summary = record.answer or f"{record.subtask}: no result ({record.stop})."
        summary = " ".join(summary.split())
        if len(summary) > self.summary_chars:
            result.truncated_summaries += 1
            summary = summary[: self.summary_chars - 1].rsplit(" ", 1)[0] + "\u2026"
        return summary

    def _synthesize(self, task: str, result: SubtaskResult) -> str:
        prompt = ANSWER_USER.format(task=task, summaries=_numbered(result.summaries))
        answer, _ = self._aux(ANSWER_SYSTEM, prompt, _ANSWER_TOKENS, result, kind="answer")
        if not answer:
            _malformed(result, "answer: empty; answered with the summaries themselves")
            answer = "\n".join(result.summaries)
        return answer

    def _aux(
        self, system: str, user: str, max_tokens: int, result: SubtaskResult, *, kind: str
    ) -> tuple[str, bool]:
        """One tool-less runtime call: its text, and whether it ran into ``max_tokens``. It is
        metered as a fold of ``kind`` (the fold figures), apart from the agent's calls."""
        messages: list[Message] = [SystemMessage(system), UserMessage(user)]
        start = time.perf_counter()
        completion = self.model.complete(messages, (), max_tokens=max_tokens)
        usage = completion.usage
        ms = (time.perf_counter() - start) * 1000
        call = FoldCall(usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens, ms)
        record = FoldRecord("subtask-fold", kind, 0, 0, 0, True, calls=(call,))
        self.meter.record_folds([record])
        result.runtime_tokens += usage.prompt_tokens + usage.completion_tokens
        result.runtime_calls += 1
        text = (completion.message.content or "").strip()
        return text, usage.completion_tokens >= max_tokens


def _malformed(result: SubtaskResult, note: str) -> None:
    result.malformed += 1
    result.notes.append(note)


def _numbered(items: Sequence[str]) -> str:
    return "\n".join(f"{i}. {item}" for i, item in enumerate(items, 1))


def _work_log(history: History) -> str:
    """A subtask's tool calls, their results and its replies, as text (the newest kept)."""
    lines: list[str] = []
    for step in history.steps:
        message = step.message
        if not isinstance(message, AssistantMessage):
            continue
        results = {r.tool_call_id: r.content for r in step.results}
        calls = message.tool_calls
        lines.extend(f"{c.name}({c.arguments}) -> {results.get(c.id, '')}" for c in calls)
        if message.content:
            lines.append(f"reply: {message.content}")
    text = "\n".join(lines) or "(no work recorded)"
    return text if len(text) <= _LOG_CHARS else "\u2026" + text[-_LOG_CHARS:]
