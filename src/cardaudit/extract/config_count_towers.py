"""Parameters of the vision tower and projector a multimodal config declares."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cardaudit.extract.config_fields import _int, model_type, text_config


def vision_count(config: Mapping[str, Any]) -> int:
    """Parameters of a vision tower and its projector (0 when there is none)."""
    vision = config.get("vision_config")
    if not isinstance(vision, dict):
        return 0
    text = text_config(config)
    text_hidden = _int(text, "hidden_size", default=0) or 0
    hidden = _int(vision, "hidden_size", "embed_dim", default=0) or 0
    inter = _int(vision, "intermediate_size", default=4 * hidden) or 4 * hidden
    depth = _int(vision, "depth", "num_hidden_layers", "num_layers", default=0) or 0
    channels = _int(vision, "in_channels", "num_channels", default=3) or 3
    patch = _int(vision, "patch_size", default=14) or 14
    mtype = model_type(config)
    vtype = model_type(vision)
    if mtype.startswith(("qwen3_5", "qwen3_vl")) or vtype.startswith(("qwen3_5", "qwen3_vl")):
        temporal = _int(vision, "temporal_patch_size", default=2) or 2
        merge = (_int(vision, "spatial_merge_size", default=2) or 2) ** 2 * hidden
        out = _int(vision, "out_hidden_size", default=text_hidden) or text_hidden
        positions = _int(vision, "num_position_embeddings", default=0) or 0
        block = 4 * hidden + (hidden * 3 * hidden + 3 * hidden) + (hidden * hidden + hidden)
        block += 2 * hidden * inter + inter + hidden
        merger = 2 * hidden + merge * merge + merge + merge * out + out
        deepstack = len(vision.get("deepstack_visual_indexes") or [])
        merger_ds = (2 * merge + merge * merge + merge + merge * out + out) * deepstack
        patch_embed = channels * temporal * patch * patch * hidden + hidden
        return patch_embed + positions * hidden + depth * block + merger + merger_ds
    if mtype.startswith("gemma4") or vtype.startswith("gemma4"):
        head_dim = _int(vision, "head_dim", default=64) or 64
        positions = _int(vision, "position_embedding_size", default=0) or 0
        block = 4 * hidden * hidden + 3 * hidden * inter + 4 * hidden + 2 * head_dim
        return (
            channels * patch * patch * hidden
            + 2 * positions * hidden
            + depth * block
            + (hidden * text_hidden)
        )
    # SigLIP / CLIP-style ViT (Gemma 3, LLaVA, PaliGemma ...)
    image = _int(vision, "image_size", default=224) or 224
    positions = (image // patch) ** 2
    block = 4 * (hidden * hidden + hidden) + 2 * hidden * inter + inter + hidden + 4 * hidden
    tower = channels * patch * patch * hidden + hidden + positions * hidden + depth * block
    tower += 2 * hidden
    projector = hidden * text_hidden + (hidden if mtype.startswith("gemma3") else text_hidden)
    return tower + projector
