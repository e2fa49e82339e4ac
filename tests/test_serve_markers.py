"""refold's PROGRESS / STALE lines stay between contextfold and the model in every API: the
client is shown each reply without them (streamed too), and when it sends that reply back the
proxy stores it with them, so the session still matches and the strategy reads its markers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from contextfold.core.messages import AssistantMessage
from contextfold.serve.scripted import ScriptedServer
from contextfold.serve.scripted_anthropic import ScriptedAnthropic
from contextfold.serve.scripted_responses import ScriptedResponses
from tests._protocols import anthropic_client, openai_client, proxy_for, sessions

MARKERS = "\nPROGRESS: read the task\nSTALE: none"
REPLY = "I will start with the parser."


def _stored_replies(path: Path) -> list[str]:
    (steps,) = sessions(path).values()
    return [s[0].content or "" for s in steps if isinstance(s[0], AssistantMessage)]


def _check(path: Path, shown: list[str]) -> None:
    assert shown == [REPLY, REPLY]
    assert _stored_replies(path) == [REPLY + MARKERS]  # one session, the markers kept


@pytest.mark.parametrize("stream", [False, True])
def test_chat_completions(tmp_path: Path, stream: bool) -> None:
    store = tmp_path / "s.db"
    reply = {"role": "assistant", "content": REPLY + MARKERS}
    with ScriptedServer(lambda body: reply) as up, proxy_for(up, "chat", store) as proxy:
        client = openai_client(proxy)
        messages: list[Any] = [{"role": "user", "content": "Fix the parser."}]
        shown = []
        for _ in range(2):
            if stream:
                chunks = client.chat.completions.create(model="m", messages=messages, stream=True)
                text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            else:
                answer = client.chat.completions.create(model="m", messages=messages)
                text = answer.choices[0].message.content or ""
            shown.append(text)
            messages += [
                {"role": "assistant", "content": text},
                {"role": "user", "content": "Go on."},
            ]
    _check(store, shown)


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_messages(tmp_path: Path, stream: bool) -> None:
    store = tmp_path / "s.db"
    with (
        ScriptedAnthropic(lambda body: REPLY + MARKERS) as up,
        proxy_for(up, "anthropic", store) as proxy,
    ):
        client = anthropic_client(proxy)
        messages: list[Any] = [{"role": "user", "content": "Fix the parser."}]
        shown = []
        for _ in range(2):
            if stream:
                with client.messages.stream(model="m", max_tokens=64, messages=messages) as s:
                    answer = s.get_final_message()
            else:
                answer = client.messages.create(model="m", max_tokens=64, messages=messages)
            shown.append("".join(b.text for b in answer.content if b.type == "text"))
            content = [b.model_dump() for b in answer.content]
            messages += [
                {"role": "assistant", "content": content},
                {"role": "user", "content": "Go on."},
            ]
    _check(store, shown)


@pytest.mark.parametrize("stream", [False, True])
def test_openai_responses(tmp_path: Path, stream: bool) -> None:
    store = tmp_path / "s.db"
    with (
        ScriptedResponses(lambda body: REPLY + MARKERS) as up,
        proxy_for(up, "responses", store) as proxy,
    ):
        client = openai_client(proxy)
        inputs: list[Any] = [{"role": "user", "content": "Fix the parser."}]
        shown = []
        for _ in range(2):
            if stream:
                events = client.responses.create(model="m", input=inputs, stream=True, store=False)
                deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
                text = "".join(deltas)
                outputs = [{"role": "assistant", "content": text}]
            else:
                answer = client.responses.create(model="m", input=inputs, store=False)
                text = answer.output_text
                outputs = [i.model_dump(exclude_none=True) for i in answer.output]
            shown.append(text)
            inputs += [*outputs, {"role": "user", "content": "Go on."}]
    _check(store, shown)


def test_only_the_final_block_of_marker_lines_is_cut() -> None:
    from contextfold.strategies.refold.markers import split_markers

    assert split_markers(REPLY + MARKERS) == (REPLY, MARKERS)
    assert split_markers("no markers here") == ("no markers here", "")
    assert split_markers("STALE: 3") == ("", "STALE: 3")
    assert split_markers("quoted\nSTALE: 3\nand more") == ("quoted\nSTALE: 3\nand more", "")
