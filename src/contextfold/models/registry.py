"""Build models from a short spec (``local``, ``openai:NAME``, ``scripted``): one mapping, like the
strategy registry, so every ``--model`` and ``--folder`` means the same.

``agent`` is not a model: as a folder spec it means the agent's own model with its own engine,
resolved where that model is known (:class:`~contextfold.strategies.folding.FolderSource`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contextfold.core.errors import ConfigError
from contextfold.core.messages import Message, UserMessage
from contextfold.core.protocols import Model
from contextfold.models.scripted import ScriptedModel

__all__ = ["MODELS", "ModelEntry", "build_model", "extractive_reply", "model_entry"]


@dataclass(frozen=True, slots=True)
class ModelEntry:
    """What a model spec stands for."""

    name: str
    description: str
    context_tokens: int
    """The context window its folder input must fit (prompt and reply)."""
    counter: str
    """Token counter spec for estimating its prompts (``resolve_counter``)."""
    profile: str | None = None
    """Its model profile (:data:`~contextfold.core.meter.PROFILES`), when one spec names one
    model: what a live run's meter measures it with."""


MODELS: dict[str, ModelEntry] = {
    e.name: e
    for e in (
        ModelEntry(
            "local",
            "embedded SmolLM2-135M-Instruct (llama-cpp-python)",
            8192,
            "smollm2",
            profile="smollm2-135m",
        ),
        ModelEntry(
            "openai", "openai:NAME on an OpenAI-compatible server (--base-url)", 32768, "approx"
        ),
        ModelEntry(
            "scripted", "deterministic extractive folder (copies prompt lines)", 32768, "approx"
        ),
    )
}
"""The model kinds a spec can name (``openai`` takes ``:NAME``)."""


def model_entry(spec: str) -> ModelEntry:
    """The registry entry of a spec; raises :class:`ConfigError` naming the known ones."""
    kind, _, name = spec.partition(":")
    entry = MODELS.get(kind)
    if entry is None or (kind == "openai") != bool(name):
        known = "local, openai:NAME, scripted"
        raise ConfigError(f"unknown model {spec!r}; known: {known}")
    return entry


def build_model(
    spec: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    threads: int = 2,
) -> Model:
    """A model from its spec.

    - ``local``: the embedded SmolLM2-135M-Instruct (llama-cpp-python), 8,192-token context;
    - ``openai:NAME``: model ``NAME`` on any OpenAI-compatible server (``base_url``; the key from
      ``api_key``, else ``OPENAI_API_KEY``, else a placeholder for a local server);
    - ``scripted``: a deterministic extractive folder (:func:`extractive_reply`): it answers a JSON
      schema with lines copied from the prompt, costs nothing and needs no weights; for smoke tests
      and offline demos of the machinery, not for quality.
    """
    model_entry(spec)
    kind, _, name = spec.partition(":")
    if kind == "local":
        from contextfold.models.local import LocalModel

        return LocalModel(n_threads=threads)
    if kind == "openai":
        from contextfold.models.openai_model import OpenAIModel

        return OpenAIModel(name, base_url=base_url, api_key=api_key)
    return scripted_folder()


def scripted_folder() -> ScriptedModel:
    """The ``scripted`` folder: a :class:`ScriptedModel` answering with :func:`extractive_reply`."""
    model: ScriptedModel

    def reply(messages: Sequence[Message], tools: Sequence[Mapping[str, Any]]) -> str:
        return extractive_reply(messages, model.response_schema)

    model = ScriptedModel(reply, name="scripted")
    return model


_SALIENT = re.compile(r"\d|[A-Z]{2,}|[_/#@]")


def extractive_reply(messages: Sequence[Message], schema: Mapping[str, Any] | None) -> str:
    """A JSON object of ``schema`` filled with lines of the last user message, deterministically.

    Strings get the lines that look informative (digits, identifiers, paths) first, then the
    others, up to 1,200 characters (or the schema's smaller ``maxLength``); lists of strings
    get up to five such lines; numbers 0, booleans false. Without a schema: the text itself.
    """
    prompt = next((m.content for m in reversed(messages) if isinstance(m, UserMessage)), "")
    lines = [ln.strip() for ln in prompt.splitlines() if ln.strip()]
    ranked = [ln for ln in lines if _SALIENT.search(ln)] + [
        ln for ln in lines if not _SALIENT.search(ln)
    ]
    if schema is None:
        return "\n".join(ranked)[:1200]
    return json.dumps(_fill(schema, ranked), ensure_ascii=False)


def _fill(schema: Mapping[str, Any], lines: list[str]) -> Any:
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props: Mapping[str, Any] = schema.get("properties", {})
        return {key: _fill(sub, lines) for key, sub in props.items()}
    if kind == "array":
        items = schema.get("items", {})
        if items.get("type") == "string":
            return lines[: min(5, int(schema.get("maxItems", 5)))]
        return []
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    limit = min(int(schema.get("maxLength", 1200)), 1200)
    text = "\n".join(lines)[:limit]
    return text or "(nothing to summarize)"
