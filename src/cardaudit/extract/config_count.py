"""Parameter counts computed from a transformers ``config.json`` alone.

The count follows the tensors transformers builds for the architecture (tied embeddings
counted once); multi-token-prediction (MTP) layers, which transformers does not build but
checkpoints often ship, are counted apart in ``components["mtp"]``. Active parameters per
token are the language model's (embeddings and LM head included, vision tower and MTP
excluded): every non-expert tensor plus ``top_k / n_experts`` of the routed experts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

ACTIVE_CONVENTION = (
    "active = language-model tensors used for one token: all non-expert tensors "
    "(embeddings and LM head included) + top_k/n_experts of routed expert tensors; "
    "vision/audio towers and MTP layers excluded"
)


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


# --------------------------------------------------------------------------- layers


#: Beyond these a config describes no real model (the largest have ~130 layers and ~512
#: experts): it is not counted rather than enumerated layer by layer.
MAX_LAYERS = 10_000
MAX_EXPERTS = 65_536


def layer_kinds(cfg: Mapping[str, Any]) -> list[str]:
    """Attention kind of each decoder layer: full, sliding, linear or mamba."""
    layers = _int(cfg, "num_hidden_layers", "n_layer", "num_layers", default=0) or 0
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
    """(query heads, key/value heads, head dim)."""
    hidden = _int(cfg, "hidden_size", "n_embd", "n_embed", "d_model", default=0) or 0
    heads = _int(cfg, "num_attention_heads", "n_head", "num_heads", default=1) or 1
    kv_heads = _int(cfg, "num_key_value_heads", "num_kv_heads", default=heads) or heads
    if cfg.get("multi_query"):
        kv_heads = 1
    head_dim = _int(cfg, "head_dim", default=hidden // heads) or hidden // heads
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


# --------------------------------------------------------------------------- MLPs


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
    if mtype in ("bloom", "gpt2", "gpt_neox", "falcon", "phi", "starcoder2", "gpt_bigcode"):
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


# --------------------------------------------------------------------------- towers


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


# --------------------------------------------------------------------------- total


#: model_type values whose layout this module counts (Llama-style decoders and the
#: families handled explicitly). Anything else gets no count rather than a Llama guess.
COUNTED_TYPES = frozenset(
    {
        "llama",
        "mistral",
        "mixtral",
        "qwen2",
        "qwen2_moe",
        "qwen3",
        "qwen3_moe",
        "qwen3_next",
        "qwen3_5",
        "qwen3_5_text",
        "qwen3_5_moe",
        "qwen3_5_moe_text",
        "deepseek_v2",
        "deepseek_v3",
        "gemma",
        "gemma2",
        "gemma3",
        "gemma3_text",
        "gemma4",
        "gemma4_text",
        "phi3",
        "gpt_oss",
        "bloom",
        "granite",
        "granitemoe",
        "jamba",
        "olmo",
        "olmo2",
        "olmoe",
    }
)
#: Keys of a Llama-style config: one without model_type is counted as such when it has them.
LLAMA_KEYS = ("hidden_size", "intermediate_size", "num_attention_heads", "num_hidden_layers")


def not_counted_reason(config: Mapping[str, Any]) -> str | None:
    """Why :func:`count_from_config` gives no count for ``config`` (None when it does)."""
    cfg = text_config(config)
    mtype = model_type(cfg)
    if mtype and mtype not in COUNTED_TYPES:
        return (
            f"config.json model_type {mtype!r} is not an architecture cardaudit counts "
            "(a wrong count would be worse than none)"
        )
    if not mtype and not all(key in cfg for key in LLAMA_KEYS):
        return "config.json has no model_type and is not laid out like a Llama config"
    hidden = _int(cfg, "hidden_size", "n_embd", "n_embed", "d_model")
    layers = _int(cfg, "num_hidden_layers", "n_layer", "num_layers")
    vocab = _int(cfg, "vocab_size", "padded_vocab_size")
    if not hidden or not layers or not vocab:
        return "config.json lacks the hidden size, layer count or vocabulary size"
    if layers > MAX_LAYERS:
        return f"config.json declares {layers:,} layers: no real model has that many"
    return None


def count_from_config(config: Mapping[str, Any]) -> ConfigCount | None:
    """Total and active parameters from ``config``; None when it lacks the basic sizes or
    describes an architecture not counted here (:func:`not_counted_reason` says which)."""
    cfg = text_config(config)
    if not_counted_reason(config) is not None:
        return None
    hidden = _int(cfg, "hidden_size", "n_embd", "n_embed", "d_model")
    layers = _int(cfg, "num_hidden_layers", "n_layer", "num_layers")
    vocab = _int(cfg, "vocab_size", "padded_vocab_size")
    if not hidden or not layers or not vocab or layers > MAX_LAYERS:
        return None
    mtype = model_type(cfg)
    notes: list[str] = []
    moe = moe_shape(cfg)
    inter = _int(cfg, "intermediate_size", "ffn_dim", "n_inner", default=4 * hidden) or 4 * hidden
    norm = 2 * hidden if mtype in ("bloom", "phi", "gpt2", "falcon", "gpt_neox") else hidden
    per_layer_norms = 4 * norm if mtype.startswith(("gemma2", "gemma3", "gemma4")) else 2 * norm
    kinds = layer_kinds(cfg)
    attention = routed = other_mlp = 0
    for index, kind in enumerate(kinds):
        attention += _attention(cfg, kind) + per_layer_norms
        if moe is not None and _is_moe_layer(cfg, index):
            layer_routed, layer_other = _moe_block(cfg, hidden, moe)
            routed += layer_routed
            other_mlp += layer_other
        else:
            other_mlp += _dense_mlp(cfg, hidden, inter)
    if mtype == "jamba":
        notes.append("Jamba: Mamba layers counted with the Jamba state-space layout")
    embeddings = vocab * hidden
    if mtype == "bloom":
        embeddings += 2 * hidden  # word_embeddings_layernorm
    tied = cfg.get("tie_word_embeddings")
    if tied is None:
        tied = mtype.startswith(("gemma", "bloom", "granite", "phi"))
    lm_head = 0 if tied else vocab * hidden
    final_norm = norm
    vision = vision_count(config)
    components = {
        "embeddings": embeddings,
        "lm_head": lm_head,
        "attention_and_norms": attention + final_norm,
        "mlp_non_expert": other_mlp,
        "experts": routed,
    }
    if vision:
        components["vision"] = vision
    mtp_layers = _int(cfg, "num_nextn_predict_layers", "mtp_num_hidden_layers", default=0) or 0
    if mtp_layers:
        layer = _attention(cfg, "full") + per_layer_norms
        if moe is not None:
            layer += sum(_moe_block(cfg, hidden, moe))
        else:
            layer += _dense_mlp(cfg, hidden, inter)
        mtp = mtp_layers * (layer + 2 * hidden * hidden + 3 * hidden)
        if mtype.startswith("deepseek"):
            mtp += mtp_layers * 2 * vocab * hidden  # each MTP layer stores embed and head copies
        components["mtp"] = mtp
        notes.append("MTP layers are not built by transformers; counted apart")
    total = sum(value for key, value in components.items() if key != "mtp")
    active = None
    if moe is not None:
        active = total - vision - routed + (routed * moe.top_k) // moe.experts
    family = mtype or "decoder"
    return ConfigCount(total, active, components, family, tuple(notes))
