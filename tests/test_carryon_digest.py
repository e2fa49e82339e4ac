"""carryon's tracker reads the live tail as step digests: a long tail goes in one folder call,
a cut part says how many lines were cut and how to restore them, the digest size is an option
that changes what the folder is sent (and so the fold cache key), and a tail too long even at
the digests' floor is still read whole, in more calls."""

from __future__ import annotations

import json

from contextfold.core.history import History
from contextfold.core.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from contextfold.core.tokens import ApproxCounter
from contextfold.models import ScriptedModel
from contextfold.strategies.carryon import CarryOnConfig, CarryOnStrategy
from contextfold.strategies.carryon.digest import cut, digest
from contextfold.strategies.folding import Folder
from tests.test_carryon import FIRST, compiler, tracker


def long_session(steps: int, lines: int = 300) -> History:
    """A task, then ``steps`` bash calls whose outputs have ``lines`` numbered lines."""
    history = History(SystemMessage("You fix bugs."))
    history.append(UserMessage("Fix the parser."))
    for k in range(steps):
        call = ToolCall(f"c{k}", "bash", json.dumps({"command": f"cat part{k}.py"}))
        output = "\n".join(f"line {n} of part{k}: x = compute({n})" for n in range(lines))
        history.append(
            AssistantMessage(f"THOUGHT: read part {k}.", tool_calls=(call,)),
            ToolMessage(f"{output}\nDONE part{k}", f"c{k}", name="bash"),
        )
    return history


def run_fold(history: History, **options: object) -> tuple[ScriptedModel, bool]:
    model = ScriptedModel([*FIRST, tracker(), compiler()])
    config = CarryOnConfig.model_validate({"threshold": 100, "gate": "none", **options})
    s = CarryOnStrategy(config, folder=Folder(model))
    (record,) = s.fold(history, None)
    return model, record.accepted


def test_a_long_tail_goes_to_the_tracker_in_one_call_and_cut_steps_say_how_to_restore() -> None:
    history = long_session(12)  # over 30,000 tokens of live tail
    assert sum(s.total_tokens for s in history.steps) > 3 * 8192
    model, accepted = run_fold(history)
    assert accepted
    assert len(model.calls) == 2  # one tracker call, one compiler call
    text = model.calls[0].messages[1].content or ""
    for k in range(1, 13):
        assert f"[step {k}] assistant calls bash(" in text  # every step, call arguments kept
        assert f"line 0 of part{k - 1}" in text and f"DONE part{k - 1}" in text  # head, tail
        assert f"lines cut; restore(step={k})]" in text
    assert "line 150 of part3" not in text  # the middle is cut, not shown


def test_the_digest_size_is_an_option_and_changes_what_the_folder_reads() -> None:
    small, _ = run_fold(long_session(4), digest_tokens=60)
    large, _ = run_fold(long_session(4), digest_tokens=600)
    read_small = small.calls[0].messages[1].content or ""
    read_large = large.calls[0].messages[1].content or ""
    assert len(read_small) < len(read_large)  # another input: another fold cache key
    assert "line 8 of part0" in read_large and "line 8 of part0" not in read_small


def test_a_tail_too_long_for_one_call_at_the_floor_is_still_read_whole() -> None:
    history = long_session(120, lines=40)
    model = ScriptedModel([*FIRST[:1], tracker(), tracker(), tracker(), compiler()])
    config = CarryOnConfig(threshold=100, gate="none")
    CarryOnStrategy(config, folder=Folder(model, context_tokens=4096)).fold(history, None)
    trackers = [c for c in model.calls if "registry" in (c.messages[0].content or "")]
    assert len(trackers) > 1
    seen = "\n".join(c.messages[1].content or "" for c in trackers)
    assert all(f"[step {k}] bash returned:" in seen for k in range(1, 121))


def test_cut_keeps_short_text_and_cuts_a_long_line_in_its_middle() -> None:
    assert cut("short", 100, 3) == "short"
    line = "a" * 50 + "b" * 400 + "c" * 50
    out = cut(line, 100, 3)
    assert out.startswith("a" * 50) and out.endswith("c" * 50)
    assert "[400 characters cut; restore(step=3)]" in out


def test_a_digest_gives_short_parts_their_whole_text() -> None:
    history = long_session(1, lines=500)
    text = digest(history[1], 400)
    assert "[step 1] assistant: THOUGHT: read part 0." in text
    assert '[step 1] assistant calls bash({"command": "cat part0.py"})' in text
    assert len(text) < 700 and ApproxCounter().count_batch([text])[0] < 200
