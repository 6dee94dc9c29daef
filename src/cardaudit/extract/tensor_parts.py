"""Which part of a model a stored tensor belongs to (vision tower, MTP layer, routed
expert or the core language model), from its name and the config's layer count."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cardaudit.extract.config_count import moe_shape, text_config

VISION_MARKERS = (
    "visual.",
    "vision_tower",
    "vision_model",
    "vision_encoder",
    "multi_modal_projector",
    "embed_vision",
    "audio_tower",
    "audio_model",
    "embed_audio",
    "mm_projector",
)


def _layer_index(name: str) -> int | None:
    """N in ``...layers.N....`` (string operations: this runs once per tensor)."""
    at = name.find("layers.")
    if at == -1 or (at and name[at - 1] != "."):
        return None
    digits = name[at + 7 : name.find(".", at + 7)]
    return int(digits) if digits.isdigit() else None


def tensor_part(name: str, num_layers: int | None) -> str:
    """Which part of the model a tensor belongs to: vision, mtp, expert or core."""
    lowered = name.lower()
    if (
        "vis" in lowered or "audio" in lowered or "multi_modal" in lowered or "mm_" in lowered
    ) and any(marker in lowered for marker in VISION_MARKERS):
        return "vision"
    if lowered.startswith(("mtp.", "model.mtp.", "mtp_")) or ".mtp." in lowered:
        return "mtp"
    if num_layers is not None:
        layer = _layer_index(name)
        if layer is not None and layer >= num_layers:
            return "mtp"
    if (".experts." in name or "_exps." in name) and "shared_expert" not in lowered:
        return "expert"
    return "core"


def num_layers(config: Mapping[str, Any] | None) -> int | None:
    if not isinstance(config, Mapping):
        return None
    value = text_config(config).get("num_hidden_layers")
    return int(value) if isinstance(value, int) else None


def moe_ratio(config: Mapping[str, Any] | None) -> tuple[int, int] | None:
    if not isinstance(config, Mapping):
        return None
    moe = moe_shape(text_config(config))
    return (moe.top_k, moe.experts) if moe else None
