"""The live part of ``contextfold demo``: the embedded model on a calculator task, said
before it loads (the first step is a while off), its steps printed as they come with a spinner
between them on a terminal, and the line the verdict closes with."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from contextfold.bench.report import short_count
from contextfold.commands.common import console
from contextfold.core.errors import ContextFoldError
from contextfold.core.messages import UserMessage

if TYPE_CHECKING:
    from rich.status import Status

    from contextfold.bench.live import LiveResult
    from contextfold.core.history import Step
    from contextfold.core.protocols import Model

__all__ = ["LIVE_STRATEGY", "LIVE_TASK", "live_line", "live_part"]

LIVE_TASK = "tutorial:budget"
"""A task whose one tool (a calculator) the embedded model does call."""
LIVE_STRATEGY = "refold"


def live_part(steps: int, threads: int) -> LiveResult | None:
    """The live run, its steps printed as they come (a spinner between them on a terminal);
    None (said why) when it cannot run."""
    from contextfold.bench.live import run_live
    from contextfold.core.counters import resolve_counter

    console.print(
        f"\n[bold]2. Live[/bold]: the embedded SmolLM2-135M on a calculator task ({LIVE_TASK}) "
        f"with {LIVE_STRATEGY}, {steps} steps at most."
    )
    console.print(
        "[yellow]note:[/yellow] a 135M model shows the machinery (tool calls, views, metering), "
        "not skill."
    )
    try:
        with console.status("loading the embedded model") as status:
            outcome = run_live(
                LIVE_TASK,
                None,
                LIVE_STRATEGY,
                lambda: _load(threads, status),
                counter=resolve_counter("smollm2"),
                max_steps=steps,
                on_step=lambda step: _stepped(step, steps, status),
            )
    except ContextFoldError as exc:
        console.print(f"[yellow]live part skipped:[/yellow] {escape(str(exc))}")
        return None
    console.print(escape(_live_summary(outcome)))
    return outcome


def _load(threads: int, status: Status) -> Model:
    """The embedded model, said before and after it loads: the first step is a while off."""
    from contextfold.models import LocalModel

    console.print(f"loading the embedded model ({threads} CPU threads)...")
    model = LocalModel(n_threads=threads)
    console.print(
        f"loaded in {model.load_seconds:.1f} s; each step is a model call on this CPU (the "
        "first reads the whole prompt: the slowest)"
    )
    status.update("step 1: the model is reading the task")
    return model


def _stepped(step: Step, steps: int, status: Status) -> None:
    _print_step(step)
    if step.kind == "assistant" and step.index < steps:
        status.update(f"step {step.index + 1} of {steps} at most: the model is writing")


def _print_step(step: Step) -> None:
    message = step.message
    if isinstance(message, UserMessage):
        task = "\n".join(f"  {line}" for line in (message.content or "").splitlines())
        console.print(f"[cyan]task:[/cyan]\n{escape(task)}")
        return
    text = (message.content or "").strip()
    if text:
        console.print(f"  [green][{step.index}] says:[/green] {escape(_clip(text, 200))}")
    for call, result in zip(message.tool_calls, step.results, strict=False):
        shown = f"{call.name}({_clip(call.arguments, 60)}) -> {_clip(result.content or '', 40)}"
        console.print(f"  [green][{step.index}][/green] {escape(shown)}")


def _clip(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def live_line(outcome: LiveResult) -> str:
    s = outcome.summary()
    steps = sum(1 for step in outcome.history.steps if step.kind == "assistant")
    answered = "reached the right total" if s["reward"] == 1 else "did not reach the right total"
    return (
        f"Live, the embedded model made {s['tool_calls']} tool calls in {steps} steps "
        f"and {answered} (reward {s['reward']:g})."
    )


def _live_summary(outcome: LiveResult) -> str:
    from contextfold.envs.tutorial import get_task

    s = outcome.summary()
    reference = get_task(LIVE_TASK.partition(":")[2]).reference
    return (
        f"{short_count(s['prompt_tokens'])} prompt tokens sent, "
        f"{s['prefix_cache_reuse']:.0%} reused from the previous prompt; "
        f"reward {s['reward']:g}. The reference answer: {reference}"
    )
