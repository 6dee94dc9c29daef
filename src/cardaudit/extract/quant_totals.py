"""Verify a config-only parameter count against the Hub's per-dtype totals of a quantized repo.

The Hub's ``safetensors`` totals of an FP8 block-scaled checkpoint count stored elements:
the FP8 weights, their F32 ``weight_scale_inv`` blocks and everything kept in BF16/F32.
They are not parameters, but they can prove a config count exact. The count is accepted
only when every equation holds:

* the F8_E4M3 total equals the elements of the linear weights the config quantizes;
* the F32 total holds at least the scale blocks those weights imply
  (``ceil(out/block) * ceil(in/block)`` each);
* all elements minus the scale blocks equal the config's parameters (MTP layers included)
  plus the buffers the checkpoint stores (DeepSeek's ``e_score_correction_bias``).

Only FP8 block quantization is supported; GPTQ / AWQ (packed int4 with group scales and
zero points) get ``None`` and their headers are read in full.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cardaudit.extract.config_count import (
    _int,
    _is_moe_layer,
    count_from_config,
    head_dims,
    layer_kinds,
    model_type,
    moe_shape,
    text_config,
)

METHOD = "config count verified against Hub dtype totals"
FP8 = "F8_E4M3"
#: Dtypes an FP8 block-scaled checkpoint may hold (weights, scales, unquantized tensors).
FP8_REPO_DTYPES = {FP8, "BF16", "F16", "F32"}


@dataclass(frozen=True)
class VerifiedCount:
    """Exact parameters of a quantized repo, proven by the Hub's per-dtype totals."""

    total: int
    by_dtype: Mapping[str, int]
    quantized: int
    scales: int
    buffers: int
    mtp: int
    experts: int


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _attention_linears(cfg: Mapping[str, Any], hidden: int) -> list[tuple[int, int]] | None:
    """(out, in) of one full-attention layer's projection matrices."""
    heads, kv_heads, head_dim = head_dims(cfg)
    if cfg.get("kv_lora_rank"):
        q_lora = _int(cfg, "q_lora_rank", default=0) or 0
        kv_lora = _int(cfg, "kv_lora_rank", default=0) or 0
        nope = _int(cfg, "qk_nope_head_dim", default=0) or 0
        rope = _int(cfg, "qk_rope_head_dim", default=0) or 0
        v_dim = _int(cfg, "v_head_dim", default=nope) or nope
        q_dim = heads * (nope + rope)
        q = [(q_lora, hidden), (q_dim, q_lora)] if q_lora else [(q_dim, hidden)]
        kv = [(kv_lora + rope, hidden), (heads * (nope + v_dim), kv_lora)]
        return [*q, *kv, (hidden, heads * v_dim)]
    if cfg.get("attn_output_gate") or cfg.get("global_head_dim"):
        return None  # layouts not enumerated here: the equations would not be tried
    return [
        (heads * head_dim, hidden),
        (kv_heads * head_dim, hidden),
        (kv_heads * head_dim, hidden),
        (hidden, heads * head_dim),
    ]


def _mlp(hidden: int, inter: int, copies: int = 1) -> list[tuple[int, int]]:
    return [(inter, hidden), (inter, hidden), (hidden, inter)] * copies


def fp8_linears(config: Mapping[str, Any]) -> tuple[list[tuple[int, int]], int] | None:
    """(out, in) of every linear weight an FP8 checkpoint quantizes (decoder and MTP layers;
    not embeddings, LM head or routers), and the routed-expert parameters; None when the
    architecture is outside what is enumerated here."""
    cfg = text_config(config)
    if config.get("vision_config") or any(kind != "full" for kind in layer_kinds(cfg)):
        return None
    if model_type(cfg) in ("gpt_oss", "jamba") or model_type(cfg).startswith("gemma"):
        return None
    hidden = _int(cfg, "hidden_size", default=0) or 0
    layers = _int(cfg, "num_hidden_layers", default=0) or 0
    inter = _int(cfg, "intermediate_size", default=0) or 0
    attention = _attention_linears(cfg, hidden)
    if not hidden or not layers or attention is None:
        return None
    moe = moe_shape(cfg)
    shared = _int(cfg, "shared_expert_intermediate_size", "shared_intermediate_size")
    n_shared = _int(cfg, "n_shared_experts", "num_shared_experts")
    if moe is not None and n_shared and not shared:
        shared = n_shared * moe.expert_intermediate
    mtp = _int(cfg, "num_nextn_predict_layers", "mtp_num_hidden_layers", default=0) or 0
    linears: list[tuple[int, int]] = []
    experts = 0
    for index in range(layers + mtp):
        linears += attention
        if moe is not None and (index >= layers or _is_moe_layer(cfg, index)):
            routed = _mlp(hidden, moe.expert_intermediate, moe.experts)
            experts += sum(o * i for o, i in routed)
            linears += routed
            if shared:
                linears += _mlp(hidden, shared)
        else:
            linears += _mlp(hidden, inter)
    return linears, experts


def stored_buffers(config: Mapping[str, Any]) -> int:
    """Persistent buffers a checkpoint stores beside the parameters transformers counts."""
    cfg = text_config(config)
    moe = moe_shape(cfg)
    if moe is None or not model_type(cfg).startswith("deepseek"):
        return 0
    if cfg.get("topk_method") != "noaux_tc":
        return 0
    layers = _int(cfg, "num_hidden_layers", default=0) or 0
    mtp = _int(cfg, "num_nextn_predict_layers", default=0) or 0
    moe_layers = sum(1 for i in range(layers) if _is_moe_layer(cfg, i)) + mtp
    return moe_layers * moe.experts  # e_score_correction_bias, one per expert per MoE layer


def verify_fp8_block(
    config: Mapping[str, Any] | None, hub_parameters: Mapping[str, int]
) -> VerifiedCount | None:
    """The config count, if the Hub's per-dtype totals prove it exact (see module doc)."""
    if not isinstance(config, Mapping):
        return None
    quant = config.get("quantization_config")
    if not isinstance(quant, Mapping) or str(quant.get("quant_method")).lower() != "fp8":
        return None
    block = quant.get("weight_block_size")
    if (
        not isinstance(block, list)
        or len(block) != 2
        or not all(isinstance(b, int) and not isinstance(b, bool) and b > 0 for b in block)
    ):
        return None
    if quant.get("modules_to_not_convert") or quant.get("ignored_layers"):
        return None  # which weights stay unquantized is not enumerated
    if set(hub_parameters) - FP8_REPO_DTYPES or FP8 not in hub_parameters:
        return None
    count = count_from_config(config)
    layout = fp8_linears(config)
    if count is None or layout is None:
        return None
    linears, experts = layout
    quantized = sum(out * inp for out, inp in linears)
    scales = sum(_ceil(out, block[0]) * _ceil(inp, block[1]) for out, inp in linears)
    buffers = stored_buffers(config)
    parameters = count.total_with_mtp + buffers
    if hub_parameters[FP8] != quantized or hub_parameters.get("F32", 0) < scales:
        return None
    if sum(hub_parameters.values()) - scales != parameters:
        return None
    by_dtype = dict(hub_parameters)
    by_dtype["F32"] = by_dtype.get("F32", 0) - scales
    by_dtype = {dtype: n for dtype, n in sorted(by_dtype.items()) if n}
    return VerifiedCount(
        parameters,
        by_dtype,
        quantized,
        scales,
        buffers,
        count.components.get("mtp", 0),
        experts,
    )
