"""refold's completion markers under hostile text (a client's or a model's): a STALE line of
20,000 ranges, runs of blank lines and spaces, numbers of thousands of digits. Parsing reads
at most MAX_STALE_ITEMS items, allocates nothing in proportion to the numbers written, and
raises nothing; through the proxy such a reply keeps the conversation going."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from contextfold.strategies.refold.markers import MAX_STALE_ITEMS, parse_markers
from contextfold.testing.upstreams.chat import ScriptedServer
from tests._serve import canonical, client, serving, stored

HOSTILE = "Done.\nPROGRESS: x\nSTALE: " + ", ".join(
    f"{i * 1001}-{i * 1001 + 1000}" for i in range(20_000)
)  # 349 KiB naming 20 million steps


def test_a_stale_line_of_twenty_thousand_ranges_is_read_up_to_the_cap() -> None:
    assert len(HOSTILE) > 349 * 1024
    tracemalloc.start()
    try:
        markers = parse_markers(HOSTILE)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20  # the text itself is a third of a MiB; old code took 2 GiB
    assert markers.stale == frozenset(range(MAX_STALE_ITEMS * 1001))
    assert markers.ignored == 20_000 - MAX_STALE_ITEMS and not markers.malformed
    assert markers.progress == "x"


@pytest.mark.parametrize(
    ("text", "stale", "malformed"),
    [
        ("ok\nSTALE: " + "9" * 5000, frozenset(), True),  # past int()'s 4,300 digits
        ("ok\nSTALE: 1-" + "9" * 5000, frozenset(), True),
        ("ok\n" + "\n" * 50_000 + "STALE: 1", frozenset({1}), False),
        ("ok\nSTALE: 1" + " " * 50_000 + "x", frozenset(), True),
        ("ok\nSTALE: 1" + " " * 50_000 + ", 2", frozenset({1, 2}), False),
        ("ok\nSTALE: 3 - 5; 7", frozenset({3, 4, 5, 7}), False),
        ("ok\nSTALE: ²", frozenset(), True),
        ("ok\nSTALE: [1, 2].", frozenset({1, 2}), False),
    ],
)
def test_hostile_stale_values_are_read_or_refused_without_raising(
    text: str, stale: frozenset[int], malformed: bool
) -> None:
    markers = parse_markers(text)
    assert (markers.stale, markers.malformed) == (stale, malformed)


def test_the_proxy_serves_a_conversation_holding_the_hostile_reply(tmp_path: Path) -> None:
    """The reply comes back from the client (and after a restart is observed again)."""
    db = tmp_path / "s.db"
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": HOSTILE},
        {"role": "user", "content": "and now?"},
    ]
    with ScriptedServer() as up:
        with serving(up, db, strategy="refold", max_body=2**20) as proxy:
            reply = client(proxy).chat.completions.create(model="m", messages=messages)
            assert reply.choices[0].message.content == "ok: and now?"
        with serving(up, db, strategy="refold", max_body=2**20) as proxy:
            more = [*messages, {"role": "assistant", "content": "x"}]
            more.append({"role": "user", "content": "again"})
            reply = client(proxy).chat.completions.create(model="m", messages=more)
            assert reply.choices[0].message.content == "ok: again"
    assert list(stored(db).values()) == [canonical(more)]
