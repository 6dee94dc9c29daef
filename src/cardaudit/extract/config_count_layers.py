"""Attention-side parameters of a decoder layer, from config.json: the kind of each layer
(full, sliding, linear, Mamba), head sizes, and the parameters of standard, multi-head
latent (DeepSeek), Gated DeltaNet (Qwen3-Next / 3.5) and Mamba (Jamba) layers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cardaudit.extract.config_count_older import FALCON_TYPES, falcon_new_architecture
from cardaudit.extract.config_fields import MAX_LAYERS, _int, model_type


def layer_kinds(cfg: Mapping[str, Any]) -> list[str]:
    """Attention kind of each decoder layer: full, sliding, linear or mamba."""
    layers = _int(cfg, "num_hidden_layers", "n_layer", "num_layers", "n_layers", default=0) or 0
    layers = min(layers, MAX_LAYERS)
    types = cfg.get("layer_types")
    if isinstance(types, list) and len(types) == layers:
        kinds = []
        for kind in types:
            text = str(kind).lower()
            if "linear" in text:
                kinds.append("linear")
            elif "mamba" in text:
                kinds.append("mamba")
            elif "sliding" in text or "local" in text or "chunked" in text:
                kinds.append("sliding")
            else:
                kinds.append("full")
        return kinds
    mtype = model_type(cfg)
    if mtype == "jamba":
        period = _int(cfg, "attn_layer_period", default=8) or 8
        offset = _int(cfg, "attn_layer_offset", default=4) or 0
        return ["full" if i % period == offset else "mamba" for i in range(layers)]
    interval = _int(cfg, "full_attention_interval")
    if mtype in ("qwen3_next", "qwen3_5_moe_text", "qwen3_5_text") and interval:
        return ["full" if (i + 1) % interval == 0 else "linear" for i in range(layers)]
    window = cfg.get("sliding_window")
    if window and mtype == "gemma2":
        return ["sliding" if i % 2 == 0 else "full" for i in range(layers)]
    if window and mtype.startswith("gemma3"):
        pattern = _int(cfg, "sliding_window_pattern", default=6) or 6
        return ["full" if (i + 1) % pattern == 0 else "sliding" for i in range(layers)]
    if window and mtype in ("mistral", "phi3", "mixtral") and cfg.get("use_sliding_window", True):
        return ["sliding"] * layers
    return ["full"] * layers


def head_dims(cfg: Mapping[str, Any]) -> tuple[int, int, int]:
    """(query heads, key/value heads, head dim), with the older families' own fields:
    Falcon's ``num_kv_heads`` / ``n_head_kv`` under its new decoder architecture and one KV
    head under ``multi_query`` (its default), ChatGLM's ``multi_query_group_num``, and
    ``kv_channels`` (ChatGLM, Qwen v1) as the head dim."""
    mtype = model_type(cfg)
    hidden = _int(cfg, "hidden_size", "n_embd", "n_embed", "d_model", default=0) or 0
    heads = _int(cfg, "num_attention_heads", "n_head", "num_heads", "n_heads", default=1) or 1
    kv_heads = _int(cfg, "num_key_value_heads", "num_kv_heads", "n_head_kv", default=heads) or heads
    if mtype == "chatglm":
        grouped = cfg.get("multi_query_attention")
        kv_heads = (_int(cfg, "multi_query_group_num", default=1) or 1) if grouped else heads
    elif mtype in FALCON_TYPES:
        if not falcon_new_architecture(cfg) and cfg.get("multi_query", True):
            kv_heads = 1
    elif cfg.get("multi_query"):
        kv_heads = 1
    head_dim = _int(cfg, "head_dim", "kv_channels", default=hidden // heads) or hidden // heads
    return heads, kv_heads, head_dim


def _attention(cfg: Mapping[str, Any], kind: str) -> int:
    mtype = model_type(cfg)
    hidden = _int(cfg, "hidden_size", "n_embd", "n_embed", default=0) or 0
    heads, kv_heads, head_dim = head_dims(cfg)
    if kind == "linear":
        return _linear_attention(cfg, hidden)
    if kind == "mamba":
        return _mamba(cfg, hidden)
    if cfg.get("kv_lora_rank"):
        return _mla(cfg, hidden, heads)
    k_eq_v = False
    if kind == "full" and cfg.get("global_head_dim"):
        head_dim = int(cfg["global_head_dim"])
        kv_heads = _int(cfg, "num_global_key_value_heads", default=kv_heads) or kv_heads
        k_eq_v = bool(cfg.get("attention_k_eq_v"))
    q_out = heads * head_dim * (2 if cfg.get("attn_output_gate") else 1)
    kv_out = kv_heads * head_dim * (1 if k_eq_v else 2)
    count = hidden * (q_out + kv_out) + heads * head_dim * hidden
    bias = bool(cfg.get("attention_bias") or cfg.get("bias"))
    if mtype in ("qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl"):
        count += q_out + kv_out  # q/k/v biases, no output bias
    elif bias or mtype == "bloom":
        count += q_out + kv_out + hidden
    if mtype.startswith(("qwen3", "gemma3", "gemma4", "olmo2", "olmoe")) or cfg.get("use_qk_norm"):
        count += 2 * head_dim
    if mtype == "gpt_oss":
        count += heads  # attention sinks
    return count


@dataclass(frozen=True)
class MlaDims:
    """Multi-head latent attention (DeepSeek-V2/V3) ranks and head dims."""

    q_lora: int
    kv_lora: int
    nope: int
    rope: int
    v_dim: int


def mla_dims(cfg: Mapping[str, Any]) -> MlaDims:
    nope = _int(cfg, "qk_nope_head_dim", default=0) or 0
    return MlaDims(
        q_lora=_int(cfg, "q_lora_rank", default=0) or 0,
        kv_lora=_int(cfg, "kv_lora_rank", default=0) or 0,
        nope=nope,
        rope=_int(cfg, "qk_rope_head_dim", default=0) or 0,
        v_dim=_int(cfg, "v_head_dim", default=nope) or nope,
    )


def _mla(cfg: Mapping[str, Any], hidden: int, heads: int) -> int:
    mla = mla_dims(cfg)
    q_lora, kv_lora, nope, rope, v_dim = mla.q_lora, mla.kv_lora, mla.nope, mla.rope, mla.v_dim
    q_dim = heads * (nope + rope)
    q = hidden * q_lora + q_lora + q_lora * q_dim if q_lora else hidden * q_dim
    kv = hidden * (kv_lora + rope) + kv_lora + kv_lora * heads * (nope + v_dim)
    return q + kv + heads * v_dim * hidden


def _linear_attention(cfg: Mapping[str, Any], hidden: int) -> int:
    """Gated DeltaNet (Qwen3-Next / Qwen3.5): fused qkv, z, a, b projections and a conv."""
    key_heads = _int(cfg, "linear_num_key_heads", default=0) or 0
    value_heads = _int(cfg, "linear_num_value_heads", default=key_heads) or key_heads
    key_dim = key_heads * (_int(cfg, "linear_key_head_dim", default=0) or 0)
    value_head_dim = _int(cfg, "linear_value_head_dim", default=0) or 0
    value_dim = value_heads * value_head_dim
    kernel = _int(cfg, "linear_conv_kernel_dim", default=4) or 4
    conv_dim = 2 * key_dim + value_dim
    return (
        hidden * conv_dim  # in_proj_qkv
        + hidden * value_dim  # in_proj_z
        + 2 * hidden * value_heads  # in_proj_a, in_proj_b
        + conv_dim * kernel  # depthwise conv
        + 2 * value_heads  # dt_bias, A_log
        + value_head_dim  # gated norm
        + value_dim * hidden  # out_proj
    )


def _mamba(cfg: Mapping[str, Any], hidden: int) -> int:
    expand = _int(cfg, "mamba_expand", default=2) or 2
    inner = expand * hidden
    state = _int(cfg, "mamba_d_state", default=16) or 16
    conv = _int(cfg, "mamba_d_conv", default=4) or 4
    rank = _int(cfg, "mamba_dt_rank", default=-(-hidden // 16)) or -(-hidden // 16)
    count = hidden * 2 * inner + inner * conv + inner  # in_proj, conv1d (+bias)
    count += inner * (rank + 2 * state) + rank * inner + inner  # x_proj, dt_proj (+bias)
    count += inner * state + inner + inner * hidden  # A_log, D, out_proj
    if model_type(cfg) == "jamba":
        count += rank + 2 * state  # dt/B/C layer norms
    return count
