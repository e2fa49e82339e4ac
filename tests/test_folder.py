"""The folder: structured output, repair, rejection, chunking, the fold cache, the registry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from contextfold.core.errors import ConfigError
from contextfold.core.messages import SystemMessage, UserMessage
from contextfold.models import ScriptedModel
from contextfold.models.registry import build_model, extractive_reply, model_entry
from contextfold.strategies.folding import FoldCache, Folder, FolderSource
from contextfold.strategies.registry import build_strategy, needs_folder


class Out(BaseModel):
    summary: str = Field(min_length=1, max_length=50)


def ask(replies: list[str], **kw: object) -> tuple[object, ScriptedModel]:
    model = ScriptedModel(replies)
    answer = Folder(model, **kw).ask("fold this", "some text", Out, max_tokens=64)  # type: ignore[arg-type]
    return answer, model


def test_a_valid_reply_is_parsed_and_the_schema_is_sent() -> None:
    answer, model = ask(['```json\n{"summary": "ok"}\n```'])
    assert answer.value == Out(summary="ok") and answer.reason is None  # type: ignore[attr-defined]
    assert model.calls[0].response_schema == Out.model_json_schema()
    assert len(answer.calls) == 1  # type: ignore[attr-defined]


def test_a_malformed_reply_gets_one_repair_round() -> None:
    answer, model = ask(["no json here", '{"summary": "fixed"}'])
    assert answer.value == Out(summary="fixed")  # type: ignore[attr-defined]
    assert len(model.calls) == 2 and "cannot be used" in model.calls[1].messages[-1].content


@pytest.mark.parametrize(
    ("replies", "why"),
    [
        (["{not json", "{still not"], "not valid JSON"),
        (['{"summary": ""}', '{"summary": ""}'], "summary"),
        (['{"summary": "' + "x" * 60 + '"}'] * 2, "at most 50"),
        (['{"other": 1}'] * 2, "summary"),
    ],
)
def test_output_still_invalid_after_repair_is_rejected_with_its_reason(
    replies: list[str], why: str
) -> None:
    answer, _ = ask(replies)
    assert answer.value is None  # type: ignore[attr-defined]
    assert "after repair" in answer.reason and why in answer.reason  # type: ignore[attr-defined]
    assert len(answer.calls) == 2  # type: ignore[attr-defined]


def test_a_folder_that_raises_is_a_rejection_not_a_crash() -> None:
    answer, _ = ask([])  # the script is empty: the model raises ModelError
    assert answer.value is None and "folder error" in answer.reason  # type: ignore[attr-defined]

    def boom(messages: object, tools: object) -> str:
        raise RuntimeError("disk on fire")

    answer = Folder(ScriptedModel(boom)).ask("i", "t", Out, max_tokens=8)
    assert answer.value is None and "RuntimeError: disk on fire" in (answer.reason or "")


def test_chunks_fit_the_room_and_lose_nothing() -> None:
    folder = Folder(ScriptedModel([]), context_tokens=400)
    blocks = [f"[step {i}] " + "word " * 30 for i in range(12)] + ["line\n" * 200]
    room = folder.room("instruction", max_tokens=64)
    chunks = folder.chunks(blocks, room)
    assert len(chunks) > 1
    assert all(folder.counter.count_batch([c])[0] <= room for c in chunks)
    joined = "".join(chunks).replace("\n", "")
    assert joined == "".join(blocks).replace("\n", "")


def test_a_single_line_longer_than_the_room_is_split_by_characters() -> None:
    folder = Folder(ScriptedModel([]), context_tokens=300)
    block = "x" * 5000
    chunks = folder.chunks([block], 100)
    assert len(chunks) > 1 and "".join(chunks) == block


def test_the_fold_cache_answers_an_identical_input_without_the_model(tmp_path: Path) -> None:
    cache = FoldCache(tmp_path / "folds.sqlite")
    first = ScriptedModel(['{"summary": "cached"}'])
    a = Folder(first, cache=cache, name="m").ask("i", "t", Out, max_tokens=8)
    again = FoldCache(tmp_path / "folds.sqlite")  # a new process would open it like this
    second = ScriptedModel([])  # would raise if called
    b = Folder(second, cache=again, name="m").ask("i", "t", Out, max_tokens=8)
    assert a.value == b.value == Out(summary="cached")
    assert b.calls[0].cache_hit and not a.calls[0].cache_hit
    assert b.calls[0].prompt_tokens == a.calls[0].prompt_tokens > 0
    other = Folder(ScriptedModel(['{"summary": "new"}']), cache=again, name="other")
    assert other.ask("i", "t", Out, max_tokens=8).value == Out(summary="new")  # name is in the key


def test_the_scripted_folder_answers_any_schema_deterministically() -> None:
    messages = [
        SystemMessage("s"),
        UserMessage("[step 3] tool returned: order #W123 costs 42\nhello"),
    ]
    text = extractive_reply(messages, Out.model_json_schema())
    data = json.loads(text)
    assert data["summary"].startswith("[step 3] tool returned: order #W123")
    assert len(data["summary"]) <= 50
    model = build_model("scripted")
    reply = model.complete(messages, response_schema=Out.model_json_schema()).message.content
    assert reply == text


def test_model_specs_and_folder_resolution() -> None:
    assert model_entry("local").context_tokens == 8192
    assert model_entry("openai:qwen").name == "openai"
    with pytest.raises(ConfigError, match="known: local, openai:NAME, scripted"):
        model_entry("openai")
    with pytest.raises(ConfigError, match="folds with a model but has no folder"):
        build_strategy("compact")
    with pytest.raises(ConfigError, match="no agent here"):
        build_strategy("summary folder=agent")
    assert needs_folder("resum") and not needs_folder("refold")
    source = FolderSource(default="scripted")
    one = build_strategy("compact", folders=source)
    two = build_strategy("iterresearch", folders=source)
    assert one.folder is two.folder  # type: ignore[attr-defined]  # built once per source
    assert build_strategy("summary folder=scripted").name == "summary"


def test_the_models_command_lists_every_folder_spec() -> None:
    from typer.testing import CliRunner

    from contextfold.cli import app

    res = CliRunner().invoke(app, ["models"])
    assert res.exit_code == 0
    for spec in ("local", "openai:NAME", "scripted", "agent"):
        assert spec in res.output
