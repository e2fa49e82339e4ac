"""Model profiles: the shape of a model's KV cache and its tokenizer (``--profile``)."""

from __future__ import annotations

from dataclasses import dataclass

from contextfold.core.errors import ConfigError

__all__ = ["PROFILES", "ModelProfile", "get_profile"]


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """The shape of a model's KV cache (from its published config) and its tokenizer."""

    name: str
    layers: int
    kv_heads: int
    head_dim: int
    dtype_bytes: int = 2
    tokenizer: str = "approx"
    """Counter spec for :func:`contextfold.core.counters.resolve_counter`."""

    @property
    def kv_bytes_per_token(self) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * self.dtype_bytes


PROFILES: dict[str, ModelProfile] = {
    p.name: p
    for p in (
        # HuggingFaceTB/SmolLM2-135M-Instruct: 30 layers, 9 heads of 64, 3 KV heads, bf16.
        ModelProfile("smollm2-135m", layers=30, kv_heads=3, head_dim=64, tokenizer="smollm2"),
        # Qwen/Qwen3-8B: 36 layers, 8 KV heads, head_dim 128, bf16.
        ModelProfile("qwen3-8b", layers=36, kv_heads=8, head_dim=128),
        # Qwen/Qwen3-14B: 40 layers, 8 KV heads, head_dim 128.
        ModelProfile("qwen3-14b", layers=40, kv_heads=8, head_dim=128),
        # Qwen/Qwen3-32B: 64 layers, 8 KV heads, head_dim 128.
        ModelProfile("qwen3-32b", layers=64, kv_heads=8, head_dim=128),
        # meta-llama/Llama-3.1-8B-Instruct: 32 layers, 8 KV heads, head_dim 128.
        ModelProfile("llama-3.1-8b", layers=32, kv_heads=8, head_dim=128),
        # meta-llama/Llama-3.1-70B-Instruct: 80 layers, 8 KV heads, head_dim 128.
        ModelProfile("llama-3.1-70b", layers=80, kv_heads=8, head_dim=128),
    )
}


def get_profile(name: str) -> ModelProfile:
    try:
        return PROFILES[name.lower()]
    except KeyError:
        raise ConfigError(f"unknown model profile {name!r}; known: {', '.join(PROFILES)}") from None
