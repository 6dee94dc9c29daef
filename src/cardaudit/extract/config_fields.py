"""The fields of a transformers ``config.json`` that parameter counting reads, and the
count record itself (:class:`ConfigCount`), shared by the ``config_count*`` modules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

ACTIVE_CONVENTION = (
    "active = language-model tensors used for one token: all non-expert tensors "
    "(embeddings and LM head included) + top_k/n_experts of routed expert tensors; "
    "vision/audio towers and MTP layers excluded"
)

#: Beyond these a config describes no real model (the largest have ~130 layers and ~512
#: experts): it is not counted rather than enumerated layer by layer.
MAX_LAYERS = 10_000
MAX_EXPERTS = 65_536


@dataclass(frozen=True)
class ConfigCount:
    """A parameter count derived from config.json."""

    total: int
    active: int | None
    components: Mapping[str, int] = field(default_factory=dict)
    family: str = "decoder"
    notes: tuple[str, ...] = ()

    @property
    def total_with_mtp(self) -> int:
        return self.total + self.components.get("mtp", 0)


def _int(config: Mapping[str, Any], *keys: str, default: int | None = None) -> int | None:
    """The first of ``keys`` that holds a non-negative number (booleans are not numbers)."""
    for key in keys:
        value = config.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float) and value >= 0:
            return int(value)
    return default


def text_config(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """The language-model part of a (possibly multimodal) config."""
    for key in ("text_config", "llm_config", "language_config", "thinker_config"):
        inner = config.get(key)
        if isinstance(inner, dict) and inner.get("hidden_size"):
            merged = dict(inner)
            if "tie_word_embeddings" not in merged and "tie_word_embeddings" in config:
                merged["tie_word_embeddings"] = config["tie_word_embeddings"]
            return merged
    return config


def model_type(config: Mapping[str, Any]) -> str:
    return str(config.get("model_type") or "").lower()


def architecture(config: Mapping[str, Any]) -> str:
    """The first class named in ``architectures`` ("" when there is none)."""
    names = config.get("architectures")
    if isinstance(names, list) and names and isinstance(names[0], str):
        return names[0]
    return ""
