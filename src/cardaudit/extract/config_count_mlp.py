"""MLP-side parameters of a decoder layer, from config.json: dense gated MLPs, routed
experts (the MoE layout and which layers hold it), shared experts and routers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cardaudit.extract.config_fields import MAX_EXPERTS, _int, model_type


@dataclass(frozen=True)
class MoE:
    experts: int
    top_k: int
    expert_intermediate: int


def moe_shape(cfg: Mapping[str, Any]) -> MoE | None:
    """Routed-expert layout of an MoE config, or None for a dense model."""
    experts = _int(cfg, "num_local_experts", "n_routed_experts", "num_experts", "moe_num_experts")
    if not experts or experts <= 1 or experts > MAX_EXPERTS:
        return None
    if model_type(cfg).startswith("gemma4") and not cfg.get("enable_moe_block", True):
        return None
    top_k = _int(cfg, "num_experts_per_tok", "top_k_experts", "moe_topk", "num_selected_experts")
    inter = _int(cfg, "moe_intermediate_size", "expert_intermediate_size", "intermediate_size")
    return MoE(experts, top_k or 1, inter or 0)


def _is_moe_layer(cfg: Mapping[str, Any], index: int) -> bool:
    mtype = model_type(cfg)
    first_dense = _int(cfg, "first_k_dense_replace", default=0) or 0
    if index < first_dense:
        return False
    if mtype.startswith("deepseek"):
        freq = _int(cfg, "moe_layer_freq", default=1) or 1
        return index % freq == 0
    if mtype == "jamba":
        period = _int(cfg, "expert_layer_period", default=2) or 1
        offset = _int(cfg, "expert_layer_offset", default=1) or 0
        return index % period == offset
    if index in (cfg.get("mlp_only_layers") or []):
        return False
    step = _int(cfg, "decoder_sparse_step", default=1) or 1
    return (index + 1) % step == 0


def _dense_mlp(cfg: Mapping[str, Any], hidden: int, inter: int) -> int:
    mtype = model_type(cfg)
    if mtype == "bloom":
        return 2 * hidden * inter + inter + hidden  # up/down with biases, no gate
    return 3 * hidden * inter + (inter * 2 + hidden if cfg.get("mlp_bias") else 0)


def _moe_block(cfg: Mapping[str, Any], hidden: int, moe: MoE) -> tuple[int, int]:
    """(routed expert parameters, other MoE-block parameters) of one layer."""
    mtype = model_type(cfg)
    inter = moe.expert_intermediate
    per_expert = 3 * hidden * inter
    other = hidden * moe.experts  # router
    if mtype == "gpt_oss":
        per_expert += 2 * inter + hidden  # gate_up and down biases
        other += moe.experts  # router bias
    routed = per_expert * moe.experts
    shared = _int(cfg, "shared_expert_intermediate_size", "shared_intermediate_size")
    n_shared = _int(cfg, "n_shared_experts", "num_shared_experts")
    if n_shared and not shared:
        shared = n_shared * inter
    if shared:
        other += 3 * hidden * shared
        if mtype.startswith(("qwen2_moe", "qwen3_next", "qwen3_5")):
            other += hidden  # shared_expert_gate
    if mtype.startswith("gemma4"):
        other += hidden + moe.experts  # router scale and per-expert scale
        dense = _int(cfg, "intermediate_size", default=0) or 0
        other += 3 * hidden * dense + 3 * hidden  # dense MLP beside the experts, extra norms
    return routed, other
