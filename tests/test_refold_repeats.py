"""refold stubs an output that repeats one the view shows in full as it arrives (repeats).

The outputs here are long enough to be cut as they arrive; these tests turn the cut off
(``cut=0``: tests/test_refold_trims.py has it), so each output is shown whole or as a stub.
"""

from __future__ import annotations

import itertools

from contextfold.core.history import History
from contextfold.core.messages import AssistantMessage, SystemMessage, ToolMessage, UserMessage
from contextfold.core.tokens import ApproxCounter
from contextfold.core.view import View
from contextfold.strategies.refold import RefoldConfig, RefoldStrategy
from tests.test_refold_reach import call
from tests.test_refold_reach import views as replay

SEARCH = "\n".join(f"flight HAT{n:03d} departs 0{n % 10}:00, 120 seats" for n in range(40))
RECORD = "\n".join(f"reservation line {n}: passenger {n}" for n in range(30))


def session(outputs: list[tuple[str, str]]) -> History:
    history = History(SystemMessage("You book flights."), counter=ApproxCounter())
    history.append(UserMessage("Find me a flight."))
    for n, (tool, text) in enumerate(outputs, start=1):
        history.append(call(n, tool, q=f"q{n}"), ToolMessage(text, f"c{n}"))
    return history


def done(history: History) -> History:
    history.append(AssistantMessage("Done."))
    return history


def views(history: History, config: RefoldConfig) -> tuple[RefoldStrategy, list[View]]:
    """The view before each agent step, as a live loop would render it (the last one after
    every output: a closing reply is added)."""
    return replay(done(history), RefoldStrategy(config))


def texts(view: View) -> list[str]:
    return [m.content or "" for m in view.messages]


def test_a_repeated_output_is_a_stub_from_the_first_view_that_holds_it() -> None:
    history = session([("search", SEARCH), ("get", RECORD), ("search", SEARCH)])
    refold, shown = views(history, RefoldConfig(cut=0))
    assert refold.advances == 0  # too short to fold: only the repeat differs from full
    last = texts(shown[-1])
    assert last.count(SEARCH) == 1  # step 1's copy, in full
    assert last[-1] == "[step 3] same output as step 1; restore(step=3) shows it"
    (elision,) = shown[-1].elisions
    assert (elision.steps, elision.reason, str(elision.restore)) == (
        (3,),
        "repeat",
        "restore(step=3)",
    )
    assert elision.tokens > 100
    assert refold.call_tool("restore", {"step": 3}, history) == SEARCH
    # it never entered the view in full, so no earlier prompt changed: each extends the last
    prompts = [v.messages for v in shown]
    assert all(new[: len(old)] == old for old, new in itertools.pairwise(prompts))


def test_the_output_a_repeat_points_at_stays_in_full_and_the_stub_does_not_change() -> None:
    """With masking and a fixed advance at every step (two outputs in the window, so the first
    copy is still in full when the repeat arrives), the boundary passes both copies: the
    earlier one is kept in full (the agent reads the text there), the repeat keeps the stub it
    had in the tail, and other outputs are masked."""
    others = [("get", RECORD.replace("line", f"row{k}")) for k in range(4)]
    history = session([("search", SEARCH), others[0], ("search", SEARCH), *others[1:]])
    refold, shown = views(history, RefoldConfig(cut=0, advance="fixed", every=1, window=2))
    assert refold.advances >= 3
    last = texts(shown[-1])
    assert "[step 1]\n" + SEARCH in last
    stub = "[step 3] same output as step 1; restore(step=3) shows it"
    assert all(stub in texts(v) for v in shown[3:])  # from its arrival on, the same stub
    assert any(e.reason == "mask" and e.steps == (2,) for e in shown[-1].elisions)
    assert not any(e.steps == (1,) for e in shown[-1].elisions)


def test_an_output_repeating_a_masked_one_is_shown_in_full() -> None:
    others = [("get", RECORD.replace("line", f"row{k}")) for k in range(4)]
    history = session([("search", SEARCH), *others, ("search", SEARCH)])
    _, shown = views(history, RefoldConfig(cut=0, advance="fixed", every=1, window=1))
    first = next(i for i, v in enumerate(shown) if any(e.steps == (1,) for e in v.elisions))
    assert first < len(shown) - 1  # step 1 was masked before its repeat arrived
    last = texts(shown[-1])
    assert "[step 6]\n" + SEARCH in last
    assert not any(e.reason == "repeat" for e in shown[-1].elisions)


def test_a_restore_result_and_a_session_without_dedup_are_left_as_they_are() -> None:
    history = session([("search", SEARCH), ("get", RECORD)])
    history.append(call(9, "restore", step=1), ToolMessage(SEARCH, "c9"))
    refold, shown = views(history, RefoldConfig(cut=0))
    assert texts(shown[-1]).count(SEARCH) == 2  # the agent asked for it: it gets it
    repeated = session([("search", SEARCH), ("get", RECORD), ("search", SEARCH)])
    plain, shown = views(repeated, RefoldConfig(cut=0, dedup=False))
    assert texts(shown[-1]).count(SEARCH) == 2 and not shown[-1].elisions
    assert refold.restores == plain.restores == 0


def test_a_later_different_output_of_the_same_call_supersedes_the_kept_copy() -> None:
    """A file read, read again unchanged (a repeat: the first copy is kept), then changed and
    read a third time: the first copy is superseded as usual, never by its own repeat."""
    history = History(SystemMessage("You edit files."), counter=ApproxCounter())
    history.append(UserMessage("Fix a.py."))
    changed = SEARCH.replace("seats", "places")
    steps = [("read", SEARCH), ("get", RECORD), ("read", SEARCH), ("read", changed)]
    for n, (tool, text) in enumerate([*steps, ("get", RECORD.replace("line", "row"))], start=1):
        path = "a.py" if tool == "read" else f"r{n}"
        history.append(call(n, tool, path=path), ToolMessage(text, f"c{n}"))
    _, shown = views(history, RefoldConfig(cut=0, mask=False, advance="fixed", every=1, window=1))
    assert any(SEARCH in t for t in texts(shown[3]))  # the repeat arrived: step 1 in full
    last = texts(shown[-1])
    assert "[step 3] same output as step 1; restore(step=3) shows it" in last
    assert any(t.startswith("[step 1] output superseded by step 4") for t in last)
