"""refold's PROGRESS / STALE lines stay between contextfold and the model in every API: the
client is shown each reply without them (streamed too), and when it sends that reply back the
proxy stores it with them, so the session still matches and the strategy reads its markers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import types

from contextfold.core.messages import AssistantMessage
from contextfold.testing.upstreams._gemini_parts import sign
from contextfold.testing.upstreams.anthropic import ScriptedAnthropic
from contextfold.testing.upstreams.chat import ScriptedServer
from contextfold.testing.upstreams.gemini import ScriptedGemini
from contextfold.testing.upstreams.gemini import text as gemini_text
from contextfold.testing.upstreams.responses import ScriptedResponses
from tests._protocols import TOKEN, anthropic_client, openai_client, proxy_for, root, sessions

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


@pytest.mark.parametrize("stream", [False, True])
def test_gemini_whose_reply_ends_in_an_empty_signed_part(tmp_path: Path, stream: bool) -> None:
    """The lines end the first text part, signed; an empty one follows, signed too (a
    streamed reply's last chunk: ``{"text": ""}`` with the finishReason)."""
    store = tmp_path / "s.db"
    said = {**gemini_text(REPLY + MARKERS), "thoughtSignature": sign("m")}
    reply = [said, gemini_text("")]  # the scripted upstream signs the last part
    with ScriptedGemini(lambda body: reply) as up, proxy_for(up, "gemini", store) as proxy:
        options = types.HttpOptions(base_url=root(proxy), headers={"X-Contextfold-Token": TOKEN})
        client = genai.Client(api_key="gm-own", http_options=options)
        contents: list[Any] = [types.Content(role="user", parts=[types.Part(text="Fix it.")])]
        shown = []
        for _ in range(2):
            if stream:
                chunks = list(client.models.generate_content_stream(model="m", contents=contents))
                parts = [p for c in chunks for p in c.candidates[0].content.parts or []]
            else:
                answer = client.models.generate_content(model="m", contents=contents)
                parts = answer.candidates[0].content.parts or []
            shown.append("".join(p.text or "" for p in parts))
            asked = types.Content(role="user", parts=[types.Part(text="Go on.")])
            contents += [types.Content(role="model", parts=parts), asked]
    _check(store, shown)


def test_only_the_final_block_of_marker_lines_is_cut() -> None:
    from contextfold.strategies.refold.markers import split_markers

    assert split_markers(REPLY + MARKERS) == (REPLY, MARKERS)
    assert split_markers("no markers here") == ("no markers here", "")
    assert split_markers("STALE: 3") == ("", "STALE: 3")
    assert split_markers("quoted\nSTALE: 3\nand more") == ("quoted\nSTALE: 3\nand more", "")


LINES = {"A": "\nPROGRESS: did A\nSTALE: none", "B": "\nPROGRESS: did B\nSTALE: 1"}


def _done(body: dict[str, Any]) -> dict[str, Any]:
    """Both tasks' first replies show ``Done.`` to their clients, with different lines."""
    users = [m["content"] for m in body["messages"] if m["role"] == "user"]
    if len(users) > 1:
        return {"role": "assistant", "content": "ok"}
    task = "A" if "Task A" in users[0] else "B"
    return {"role": "assistant", "content": "Done." + LINES[task]}


def _ask(proxy: Any, messages: list[Any]) -> str:
    answer = openai_client(proxy).chat.completions.create(model="m", messages=messages)
    return answer.choices[0].message.content or ""


def _opening(task: str) -> list[Any]:
    return [{"role": "user", "content": f"Task {task}."}]


def _back(task: str, reply: str = "Done.") -> list[Any]:
    return [
        *_opening(task),
        {"role": "assistant", "content": reply},
        {"role": "user", "content": "Next."},
    ]


def _replies(path: Path) -> dict[str, str]:
    """Each stored session's first reply, by the task it answered."""
    out = {}
    for steps in sessions(path).values():
        if len(steps) > 1:
            out[str(steps[0][0].content)[5]] = steps[1][0].content or ""
    return out


def test_two_sessions_shown_the_same_reply_each_get_their_own_lines_back(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    with ScriptedServer(_done) as up, proxy_for(up, "chat", store) as proxy:
        assert _ask(proxy, _opening("A")) == _ask(proxy, _opening("B")) == "Done."
        _ask(proxy, _back("A"))
        _ask(proxy, _back("B"))
        sent = [body["messages"][1]["content"] for _, body in up.requests[2:]]
    assert sent == ["Done." + LINES["A"], "Done." + LINES["B"]]  # what each model was shown
    assert _replies(store) == {"A": "Done." + LINES["A"], "B": "Done." + LINES["B"]}


def test_a_reply_the_proxy_did_not_serve_gets_no_lines(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    with ScriptedServer(_done) as up, proxy_for(up, "chat", store) as proxy:
        _ask(proxy, _opening("A"))
        _ask(proxy, _opening("B"))
        _ask(proxy, _back("A", "Done!"))  # the client edited the reply
    assert _replies(store) == {"A": "Done!"}


def test_a_restarted_proxy_puts_the_lines_back(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    with ScriptedServer(_done) as up:
        with proxy_for(up, "chat", store) as proxy:
            assert _ask(proxy, _opening("A")) == "Done."
        with proxy_for(up, "chat", store) as proxy:  # a new process on the same store
            _ask(proxy, _back("A"))
    assert _replies(store) == {"A": "Done." + LINES["A"]}
    assert len(sessions(store)) == 1  # the same session, continued


@pytest.mark.postgres
def test_another_replica_on_the_store_puts_the_lines_back(postgres: Any) -> None:
    url = postgres.new_database()
    up = ScriptedServer(_done)
    with up, proxy_for(up, "chat", url) as first, proxy_for(up, "chat", url) as second:
        assert _ask(first, _opening("A")) == "Done."
        _ask(second, _back("A"))
        assert up.requests[-1][1]["messages"][1]["content"] == "Done." + LINES["A"]
    from contextfold.core.store import open_store

    with open_store(url) as opened:
        (sid,) = opened.list_sessions()
        steps = opened.load_session(sid).steps
    assert steps[1].messages[0].content == "Done." + LINES["A"]
