"""What a client sees of a request the proxy answers in several upstream calls (a round that
called ``restore``, then the answer), in every API, whole and streamed: every word the model
wrote for it, in order, each round's PROGRESS / STALE lines cut from that round only, nothing
glued; and the stored history holds the same words with the marker lines after them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contextfold.core.messages import AssistantMessage
from tests._protocols import proxy_for, sessions
from tests._rounds import API_STREAMS, Conversation, answered, assistant_texts, upstream

FIRST_MARKS = "\nPROGRESS: looked for the cut lines\nSTALE: none"
LAST_MARKS = "\nPROGRESS: answered\nSTALE: none"
RESTORE = ("call", "restore", '{"step": 0}')


def _stored_replies(path: Path) -> list[str]:
    (steps,) = sessions(path).values()
    return [s[0].content or "" for s in steps if isinstance(s[0], AssistantMessage)]


def _restore_then(first: str, answer: str) -> Any:
    def script(body: dict[str, Any], api: str) -> list[tuple[str, ...]]:
        if answered(api, body):
            return [("text", answer)]
        if "Thanks" in str(body):
            return [("text", "You are welcome.")]
        return [("text", first), RESTORE]

    return script


def _run(
    tmp_path: Path, api: str, stream: bool, first: str, answer: str, via: str = ""
) -> tuple[str, Any]:
    """A restore round whose text is ``first``, then ``answer``; then the client sends the
    reply back. What the client was shown, and the upstream (of API ``via``, or the
    client's)."""
    store, via = tmp_path / "s.db", via or api
    script = _restore_then(first, answer)
    up = upstream(via, lambda body: script(body, via))
    with up, proxy_for(up, via, store, strategy="refold") as proxy:
        talk = Conversation(proxy, api, stream)
        talk.say("Restore what you cut, then say whether all steps are done.")
        shown = talk.ask()
        talk.say("Thanks.")
        talk.ask()
    return shown.text, up


@pytest.mark.parametrize(("api", "stream"), API_STREAMS)
def test_the_answer_after_a_restore_round_that_ends_in_markers_reaches_the_client(
    tmp_path: Path, api: str, stream: bool
) -> None:
    first, answer = "Restoring the cut lines.", "All steps done."
    shown, up = _run(tmp_path, api, stream, first + FIRST_MARKS, answer + LAST_MARKS)
    assert shown == "Restoring the cut lines.\n\nAll steps done."
    kept = shown + FIRST_MARKS + LAST_MARKS  # the words as shown, then every round's markers
    assert _stored_replies(tmp_path / "s.db") == [kept]
    last = up.calls[-1] if api != "chat" else up.requests[-1][1]
    assert assistant_texts(api, last) == [kept]  # the model sees what the user saw


@pytest.mark.parametrize(("api", "stream"), [a for a in API_STREAMS if a[0] != "chat"])
def test_rounds_translated_to_a_chat_upstream_reach_the_client_whole(
    tmp_path: Path, api: str, stream: bool
) -> None:
    first, answer = "Restoring the cut lines.", "All steps done."
    shown, up = _run(tmp_path, api, stream, first + FIRST_MARKS, answer + LAST_MARKS, "chat")
    assert shown == "Restoring the cut lines.\n\nAll steps done."
    kept = shown + FIRST_MARKS + LAST_MARKS
    assert _stored_replies(tmp_path / "s.db") == [kept]
    assert assistant_texts("chat", up.requests[-1][1]) == [kept]


@pytest.mark.parametrize(("api", "stream"), API_STREAMS)
def test_round_texts_without_markers_are_not_glued(tmp_path: Path, api: str, stream: bool) -> None:
    shown, _ = _run(tmp_path, api, stream, "Restoring the cut lines.", "All steps done.")
    assert shown == "Restoring the cut lines.\n\nAll steps done."
    assert _stored_replies(tmp_path / "s.db") == [shown]


@pytest.mark.parametrize(("api", "stream"), API_STREAMS)
def test_an_earlier_rounds_marker_lines_never_reach_the_client(
    tmp_path: Path, api: str, stream: bool
) -> None:
    first = "Restoring the cut lines." + FIRST_MARKS + "\n"  # a trailing newline after them
    shown, _ = _run(tmp_path, api, stream, first, "All steps done.")
    assert shown == "Restoring the cut lines.\n\nAll steps done."
    assert _stored_replies(tmp_path / "s.db") == [shown + FIRST_MARKS + "\n"]


LOOK = ("text", "Let me check.")
WEATHER = ("call", "weather", '{"city": "Oslo"}')
ASKED = "\nPROGRESS: asked for the weather\nSTALE: none"


def _blocks_then_sunny(blocks: list[tuple[str, ...]]) -> Any:
    def script(body: dict[str, Any], api: str) -> list[tuple[str, ...]]:
        return [("text", "Sunny.")] if answered(api, body) else blocks

    return script


def _blocks(tmp_path: Path, api: str, stream: bool, blocks: list[tuple[str, ...]]) -> Any:
    """The client asks, gets ``blocks`` (one of them a call of its tool), answers the call."""
    from tests._rounds import weather_tool

    script = _blocks_then_sunny(blocks)
    up = upstream(api, lambda body: script(body, api))
    with up, proxy_for(up, api, tmp_path / "s.db", strategy="refold") as proxy:
        talk = Conversation(proxy, api, stream, tools=[weather_tool(api)])
        talk.say("What is the weather in Oslo?")
        shown = talk.ask()
        talk.answer_calls(shown, "sunny")
        talk.ask()
    return shown, up


@pytest.mark.parametrize(("api", "stream"), [a for a in API_STREAMS if a[0] != "chat"])
def test_blocks_around_a_call_stay_apart_when_markers_are_cut(
    tmp_path: Path, api: str, stream: bool
) -> None:
    shown, up = _blocks(tmp_path, api, stream, [LOOK, WEATHER, ("text", "Checked." + ASKED)])
    assert shown.kinds == ["text", "tool_use", "text"]
    assert shown.texts == ["Let me check.", "Checked."]
    assert _stored_replies(tmp_path / "s.db") == ["Let me check.Checked." + ASKED]
    sent = up.calls[-1]  # the model is shown its reply as it wrote it, block by block
    kinds = _kinds(api, sent)
    assert kinds == ["text", "tool_use", "text"], kinds


@pytest.mark.parametrize(("api", "stream"), [a for a in API_STREAMS if a[0] != "chat"])
def test_a_last_block_of_marker_lines_only_is_cut_whole(
    tmp_path: Path, api: str, stream: bool
) -> None:
    shown, _ = _blocks(tmp_path, api, stream, [LOOK, WEATHER, ("text", ASKED.lstrip())])
    assert shown.kinds == ["text", "tool_use"] and shown.texts == ["Let me check."]
    assert _stored_replies(tmp_path / "s.db") == ["Let me check." + ASKED]


def _kinds(api: str, body: dict[str, Any]) -> list[str]:
    """The kinds of the blocks (items) of the reply the client sent back, as sent upstream."""
    if api == "anthropic":
        reply = body["messages"][-2]["content"]
        return [b["type"] for b in reply]
    items = body["input"][1:-1]  # after the question, before the call's output
    return ["text" if i["type"] == "message" else "tool_use" for i in items]


@pytest.mark.parametrize("api", ["chat", "anthropic", "responses"])
def test_the_last_allowed_round_offers_the_strategys_tools_no_more(
    tmp_path: Path, api: str
) -> None:
    """On the last round the model may make, ``restore`` is neither offered nor called in
    what it is sent: the earlier rounds' calls of it and their answers are written as text,
    so no API (Anthropic's refuses a call of an undefined tool) needs it defined."""
    up = upstream(api, lambda body: [("text", "Again."), RESTORE])  # it never stops asking
    with up, proxy_for(up, api, tmp_path / "s.db", strategy="refold", max_rounds=2) as proxy:
        talk = Conversation(proxy, api, False)
        talk.say("What did step 0 say?")
        shown = talk.ask()
    bodies = [b for _, b in up.requests] if api == "chat" else up.calls
    assert len(bodies) == 2
    assert "restore" in str(bodies[0].get("tools"))
    last = bodies[1]
    assert "restore" not in str(last.get("tools"))
    sent = json.dumps(last["messages"] if api != "responses" else last["input"])
    assert "tool_use" not in sent and "function_call" not in sent and "tool_call" not in sent
    assert "restore(" in sent  # the call and its answer, as text
    assert shown.text == "Again.\n\nAgain." and shown.call_ids == []
