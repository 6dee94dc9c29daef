"""Parameter counts computed from a transformers ``config.json`` alone.

The count follows the tensors transformers builds for the architecture (tied embeddings
counted once); multi-token-prediction (MTP) layers, which transformers does not build but
checkpoints often ship, are counted apart in ``components["mtp"]``. Active parameters per
token are the language model's (embeddings and LM head included, vision tower and MTP
excluded): every non-expert tensor plus ``top_k / n_experts`` of the routed experts.

This module dispatches: Llama-style decoders (and the families handled inside that layout)
are counted here from :mod:`.config_count_layers`, :mod:`.config_count_mlp` and
:mod:`.config_count_towers`; the older families with layouts of their own are counted in
:mod:`.config_count_older` (in transformers) and :mod:`.config_count_remote`
(``trust_remote_code`` models).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cardaudit.extract.config_count_layers import (
    MlaDims,
    _attention,
    _linear_attention,
    _mamba,
    _mla,
    head_dims,
    layer_kinds,
    mla_dims,
)
from cardaudit.extract.config_count_mlp import MoE, _dense_mlp, _is_moe_layer, _moe_block, moe_shape
from cardaudit.extract.config_count_older import COUNTERS as OLDER_COUNTERS
from cardaudit.extract.config_count_older import older_family
from cardaudit.extract.config_count_remote import COUNTERS as REMOTE_COUNTERS
from cardaudit.extract.config_count_remote import remote_family
from cardaudit.extract.config_count_towers import vision_count
from cardaudit.extract.config_fields import (
    ACTIVE_CONVENTION,
    MAX_EXPERTS,
    MAX_LAYERS,
    ConfigCount,
    _int,
    model_type,
    text_config,
)

__all__ = [
    "ACTIVE_CONVENTION",
    "COUNTED_TYPES",
    "MAX_EXPERTS",
    "MAX_LAYERS",
    "ConfigCount",
    "MlaDims",
    "MoE",
    "_attention",
    "_int",
    "_is_moe_layer",
    "_linear_attention",
    "_mamba",
    "_mla",
    "count_from_config",
    "family_counter",
    "head_dims",
    "layer_kinds",
    "mla_dims",
    "model_type",
    "moe_shape",
    "not_counted_reason",
    "text_config",
    "vision_count",
]


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
        "yi",
    }
)
#: Keys of a Llama-style config: one without model_type is counted as such when it has them.
LLAMA_KEYS = ("hidden_size", "intermediate_size", "num_attention_heads", "num_hidden_layers")


def family_counter(
    config: Mapping[str, Any],
) -> Callable[[Mapping[str, Any]], ConfigCount | str] | None:
    """The counter of the older family (:mod:`.config_count_older`) or remote-code family
    (:mod:`.config_count_remote`) ``config`` belongs to; None for the Llama-style path."""
    return _counter_of(text_config(config))


def _counter_of(cfg: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], ConfigCount | str] | None:
    family = older_family(cfg)
    if family is not None:
        return OLDER_COUNTERS[family]
    family = remote_family(cfg)
    return REMOTE_COUNTERS[family] if family is not None else None


def _counted(config: Mapping[str, Any], *, reason_only: bool = False) -> ConfigCount | str | None:
    """The count of ``config``, or why there is none; with ``reason_only``, None stands
    for "counted" on the Llama path, which is not worked out."""
    cfg = text_config(config)
    counter = _counter_of(cfg)
    if counter is not None:
        if cfg is not config or isinstance(config.get("vision_config"), Mapping):
            return (
                f"config.json pairs a {model_type(cfg)!r} language model with another tower: "
                "that combination is not counted"
            )
        return counter(cfg)
    reason = _llama_style_reason(cfg)
    if reason is not None or reason_only:
        return reason
    return _llama_style_count(config, cfg)


def not_counted_reason(config: Mapping[str, Any]) -> str | None:
    """Why :func:`count_from_config` gives no count for ``config`` (None when it does)."""
    found = _counted(config, reason_only=True)
    return found if isinstance(found, str) else None


def count_from_config(config: Mapping[str, Any]) -> ConfigCount | None:
    """Total and active parameters from ``config``; None when it lacks the basic sizes or
    describes an architecture, or a variant of one, not counted here
    (:func:`not_counted_reason` says which)."""
    found = _counted(config)
    return found if isinstance(found, ConfigCount) else None


def _llama_style_reason(cfg: Mapping[str, Any]) -> str | None:
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


def _llama_style_count(config: Mapping[str, Any], cfg: Mapping[str, Any]) -> ConfigCount:
    """The Llama-style path: decoder layers of :mod:`.config_count_layers` and
    :mod:`.config_count_mlp`, embeddings, head, MTP layers and a vision tower."""
    hidden = _int(cfg, "hidden_size", "n_embd", "n_embed", "d_model") or 0
    vocab = _int(cfg, "vocab_size", "padded_vocab_size") or 0
    mtype = model_type(cfg)
    notes: list[str] = []
    moe = moe_shape(cfg)
    inter = _int(cfg, "intermediate_size", "ffn_dim", "n_inner", default=4 * hidden) or 4 * hidden
    norm = 2 * hidden if mtype == "bloom" else hidden  # LayerNorm weight and bias
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
