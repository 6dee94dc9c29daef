"""The linear weights of a decoder, by family, as a quantizer sees them (from config.json).

Quantizers convert some linear layers and keep the rest in floating point; which ones
differs between tools (attention or not, shared experts, dense MLPs, MTP layers, routers,
the LM head). :func:`linear_families` lists the (out, in) shape of every linear weight by
family so that :mod:`cardaudit.extract.quant_totals` can try each combination.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cardaudit.extract.config_count import (
    MAX_LAYERS,
    _int,
    _is_moe_layer,
    family_counter,
    head_dims,
    layer_kinds,
    mla_dims,
    model_type,
    moe_shape,
    text_config,
)

#: More linear weights than any real checkpoint holds (DeepSeek-V3: ~45k, Kimi K2: ~70k).
MAX_LINEARS = 2_000_000


def _attention_linears(cfg: Mapping[str, Any], hidden: int) -> list[tuple[int, int]] | None:
    """(out, in) of one full-attention layer's projection matrices."""
    heads, kv_heads, head_dim = head_dims(cfg)
    if cfg.get("kv_lora_rank"):
        mla = mla_dims(cfg)
        q_dim = heads * (mla.nope + mla.rope)
        q = [(mla.q_lora, hidden), (q_dim, mla.q_lora)] if mla.q_lora else [(q_dim, hidden)]
        kv = [(mla.kv_lora + mla.rope, hidden), (heads * (mla.nope + mla.v_dim), mla.kv_lora)]
        return [*q, *kv, (hidden, heads * mla.v_dim)]
    if cfg.get("global_head_dim"):
        return None  # Gemma 4's global layers: not enumerated, the equations are not tried
    gate = 2 if cfg.get("attn_output_gate") else 1  # Qwen3-Next / 3.5: q_proj holds a gate
    return [
        (gate * heads * head_dim, hidden),
        (kv_heads * head_dim, hidden),
        (kv_heads * head_dim, hidden),
        (hidden, heads * head_dim),
    ]


def _linear_attention_linears(
    cfg: Mapping[str, Any], hidden: int
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Gated DeltaNet (Qwen3-Next / 3.5): the projections (qkv, z, out) and the per-head
    gates (a, b), as :func:`cardaudit.extract.config_count` counts them."""
    key_heads = _int(cfg, "linear_num_key_heads", default=0) or 0
    value_heads = _int(cfg, "linear_num_value_heads", default=key_heads) or key_heads
    key_dim = key_heads * (_int(cfg, "linear_key_head_dim", default=0) or 0)
    value_dim = value_heads * (_int(cfg, "linear_value_head_dim", default=0) or 0)
    projections = [(2 * key_dim + value_dim, hidden), (value_dim, hidden), (hidden, value_dim)]
    return projections, [(value_heads, hidden), (value_heads, hidden)]


def _mlp(hidden: int, inter: int, copies: int = 1) -> list[tuple[int, int]]:
    return [(inter, hidden), (inter, hidden), (hidden, inter)] * copies


@dataclass(frozen=True)
class LinearFamilies:
    """(out, in) of the linear weights a quantizer may convert, by family: ``attention``,
    ``linear_attention`` and ``linear_attention_gates`` (Gated DeltaNet layers), ``experts``
    (routed), ``shared_experts``, ``dense_mlp`` (decoder layers), ``mtp`` (the attention and
    MLP linears of the MTP layers), ``mtp_projection`` (their input projection), ``router``
    and ``lm_head``; ``expert_parameters`` are the routed experts' parameters in every layer,
    MTP included. Vision towers are not listed: their linears are expected unquantized."""

    families: Mapping[str, list[tuple[int, int]]]
    expert_parameters: int
    #: The part of ``expert_parameters`` in MTP layers.
    mtp_expert_parameters: int = 0
    #: Per family, the outputs of the linears the config gives a bias (Qwen2's q/k/v...).
    biased_outputs: Mapping[str, int] = field(default_factory=dict)

    def unbiased_outputs(self, names: Iterable[str]) -> int:
        """Outputs of the linears in ``names`` that have no bias in the config."""
        return sum(
            sum(out for out, _ in self.families.get(name, [])) - self.biased_outputs.get(name, 0)
            for name in names
        )

    def linears(self, names: Iterable[str]) -> list[tuple[int, int]]:
        return [shape for name in names for shape in self.families.get(name, [])]


def linear_families(config: Mapping[str, Any]) -> LinearFamilies | None:
    """The linear weights of ``config``'s decoder by family; None when the architecture is
    outside what is enumerated here (Mamba layers, gpt-oss, Gemma, and the older families
    with layouts of their own: Falcon, GPT-NeoX, ChatGLM, Qwen v1...), so that quantized
    bytes are "not derivable" for them rather than derived from a Llama layout."""
    if family_counter(config) is not None:
        return None
    cfg = text_config(config)
    kinds = layer_kinds(cfg)
    if "mamba" in kinds:
        return None
    if model_type(cfg) in ("gpt_oss", "jamba") or model_type(cfg).startswith("gemma"):
        return None
    hidden = _int(cfg, "hidden_size", default=0) or 0
    layers = _int(cfg, "num_hidden_layers", default=0) or 0
    inter = _int(cfg, "intermediate_size", default=0) or 0
    mtp = _int(cfg, "num_nextn_predict_layers", "mtp_num_hidden_layers", default=0) or 0
    if not 0 < layers + mtp <= MAX_LAYERS:
        return None
    attention = _attention_linears(cfg, hidden)
    if not hidden or attention is None:
        return None
    moe = moe_shape(cfg)
    if (layers + mtp) * (3 * moe.experts if moe else 3) > MAX_LINEARS:
        return None  # no real model: listing them would only exhaust memory
    shared = _int(cfg, "shared_expert_intermediate_size", "shared_intermediate_size")
    n_shared = _int(cfg, "n_shared_experts", "num_shared_experts")
    if moe is not None and n_shared and not shared:
        shared = n_shared * moe.expert_intermediate
    linear, gates = _linear_attention_linears(cfg, hidden)
    families: dict[str, list[tuple[int, int]]] = {
        name: []
        for name in (
            "attention",
            "linear_attention",
            "linear_attention_gates",
            "experts",
            "shared_experts",
            "dense_mlp",
            "mtp",
            "router",
        )
    }
    families["mtp_projection"] = [(hidden, 2 * hidden)] * mtp
    experts = mtp_experts = 0
    biased: dict[str, int] = {}
    attention_biases = _attention_bias_outputs(cfg, attention)
    for index in range(layers + mtp):
        in_mtp = index >= layers
        layer: dict[str, list[tuple[int, int]]] = {"attention": list(attention)}
        if not in_mtp and kinds[index] == "linear":
            layer = {"linear_attention": list(linear), "linear_attention_gates": list(gates)}
        if moe is not None and (in_mtp or _is_moe_layer(cfg, index)):
            layer["experts"] = _mlp(hidden, moe.expert_intermediate, moe.experts)
            routed = moe.experts * 3 * hidden * moe.expert_intermediate
            experts += routed
            mtp_experts += routed if in_mtp else 0
            if shared:
                layer["shared_experts"] = _mlp(hidden, shared)
            if not in_mtp:
                families["router"].append((moe.experts, hidden))
        else:
            layer["dense_mlp"] = _mlp(hidden, inter)
        for name, shapes in layer.items():
            families["mtp" if in_mtp else name] += shapes
        if "attention" in layer:
            family = "mtp" if in_mtp else "attention"
            biased[family] = biased.get(family, 0) + attention_biases
    vocab = _int(cfg, "vocab_size", default=0) or 0
    if vocab and not cfg.get("tie_word_embeddings", False):
        families["lm_head"] = [(vocab, hidden)]
    return LinearFamilies({k: v for k, v in families.items() if v}, experts, mtp_experts, biased)


def _attention_bias_outputs(cfg: Mapping[str, Any], attention: list[tuple[int, int]]) -> int:
    """Outputs of one layer's attention projections that carry a bias (as counted in
    :mod:`cardaudit.extract.config_count`: Qwen2's q/k/v, or all four with ``attention_bias``)."""
    if cfg.get("kv_lora_rank") or len(attention) != 4:
        return 0
    if model_type(cfg) in ("qwen2", "qwen2_moe"):
        return sum(out for out, _ in attention[:3])
    if cfg.get("attention_bias") or cfg.get("bias"):
        return sum(out for out, _ in attention)
    return 0


def stored_buffers(config: Mapping[str, Any], *, with_mtp: bool = True) -> int:
    """Persistent buffers a checkpoint stores beside the parameters transformers counts."""
    cfg = text_config(config)
    moe = moe_shape(cfg)
    if moe is None or not model_type(cfg).startswith("deepseek"):
        return 0
    if cfg.get("topk_method") != "noaux_tc":
        return 0
    layers = _int(cfg, "num_hidden_layers", default=0) or 0
    mtp = (_int(cfg, "num_nextn_predict_layers", default=0) or 0) if with_mtp else 0
    moe_layers = sum(1 for i in range(layers) if _is_moe_layer(cfg, i)) + mtp
    return moe_layers * moe.experts  # e_score_correction_bias, one per expert per MoE layer


@dataclass(frozen=True)
class NamedLinear:
    """One linear weight with the module name transformers gives it (``layer`` is None
    outside the decoder layers)."""

    name: str
    family: str
    shape: tuple[int, int]
    layer: int | None = None


def _mlp_names(prefix: str, mtype: str) -> tuple[str, str, str]:
    if mtype == "mixtral" and ".experts." in prefix:
        return (f"{prefix}.w1", f"{prefix}.w3", f"{prefix}.w2")
    return (f"{prefix}.gate_proj", f"{prefix}.up_proj", f"{prefix}.down_proj")


def _attention_names(cfg: Mapping[str, Any], prefix: str) -> tuple[str, ...]:
    if cfg.get("kv_lora_rank"):
        q = ("q_a_proj", "q_b_proj") if _int(cfg, "q_lora_rank", default=0) else ("q_proj",)
        names = (*q, "kv_a_proj_with_mqa", "kv_b_proj", "o_proj")
    else:
        names = ("q_proj", "k_proj", "v_proj", "o_proj")
    return tuple(f"{prefix}.self_attn.{name}" for name in names)


def named_linears(config: Mapping[str, Any]) -> list[NamedLinear] | None:
    """Every linear weight of ``config``'s decoder with its module name and family (the
    families of :class:`LinearFamilies`; gpt-oss's fused experts as one gate_up and one
    down per expert). MTP layers are numbered after the decoder layers, as DeepSeek's
    checkpoints store them. None where :func:`linear_families` gives none (and gpt-oss is
    added)."""
    cfg = text_config(config)
    mtype = model_type(cfg)
    if mtype == "gpt_oss":
        return _gpt_oss_linears(cfg)
    layout = linear_families(config)
    if layout is None:
        return None
    hidden = _int(cfg, "hidden_size", default=0) or 0
    layers = _int(cfg, "num_hidden_layers", default=0) or 0
    inter = _int(cfg, "intermediate_size", default=0) or 0
    mtp = _int(cfg, "num_nextn_predict_layers", "mtp_num_hidden_layers", default=0) or 0
    kinds = layer_kinds(cfg)
    moe = moe_shape(cfg)
    attention = _attention_linears(cfg, hidden) or []
    linear, gates = _linear_attention_linears(cfg, hidden)
    shared = _int(cfg, "shared_expert_intermediate_size", "shared_intermediate_size")
    n_shared = _int(cfg, "n_shared_experts", "num_shared_experts")
    if moe is not None and n_shared and not shared:
        shared = n_shared * moe.expert_intermediate
    block = "block_sparse_moe" if mtype == "mixtral" else "mlp"
    shared_name = "shared_experts" if mtype.startswith("deepseek") else "shared_expert"
    found: list[NamedLinear] = []
    for index in range(layers + mtp):
        in_mtp = index >= layers
        prefix = f"model.layers.{index}"

        def add(
            family: str,
            names: Iterable[str],
            shapes: Iterable[tuple[int, int]],
            in_mtp: bool = in_mtp,
            index: int = index,
        ) -> None:
            for name, shape in zip(names, shapes, strict=True):
                found.append(NamedLinear(name, "mtp" if in_mtp else family, shape, index))

        if not in_mtp and kinds[index] == "linear":
            names = ("in_proj_qkv", "in_proj_z", "out_proj")
            add("linear_attention", (f"{prefix}.linear_attn.{n}" for n in names), linear)
            names = ("in_proj_a", "in_proj_b")
            add("linear_attention_gates", (f"{prefix}.linear_attn.{n}" for n in names), gates)
        else:
            add("attention", _attention_names(cfg, prefix), attention)
        if moe is not None and (in_mtp or _is_moe_layer(cfg, index)):
            for expert in range(moe.experts):
                names = _mlp_names(f"{prefix}.{block}.experts.{expert}", mtype)
                add("experts", names, _mlp(hidden, moe.expert_intermediate))
            if shared:
                add(
                    "shared_experts",
                    _mlp_names(f"{prefix}.mlp.{shared_name}", mtype),
                    _mlp(hidden, shared),
                )
            if not in_mtp:
                add("router", (f"{prefix}.{block}.gate",), ((moe.experts, hidden),))
        else:
            add("dense_mlp", _mlp_names(f"{prefix}.mlp", mtype), _mlp(hidden, inter))
        if in_mtp:
            found.append(
                NamedLinear(f"{prefix}.eh_proj", "mtp_projection", (hidden, 2 * hidden), index)
            )
    vocab = _int(cfg, "vocab_size", default=0) or 0
    if vocab and not cfg.get("tie_word_embeddings", False):
        found.append(NamedLinear("lm_head", "lm_head", (vocab, hidden)))
    return found


def _gpt_oss_linears(cfg: Mapping[str, Any]) -> list[NamedLinear] | None:
    """gpt-oss: q/k/v/o, a router and fused experts (gate_up (2·inter, hidden) and down
    (hidden, inter) per expert), as its checkpoints store them."""
    hidden = _int(cfg, "hidden_size", default=0) or 0
    layers = _int(cfg, "num_hidden_layers", default=0) or 0
    moe = moe_shape(cfg)
    attention = _attention_linears(cfg, hidden)
    if moe is None or not hidden or attention is None or not 0 < layers <= MAX_LAYERS:
        return None
    if layers * moe.experts > MAX_LINEARS:
        return None
    inter = moe.expert_intermediate
    found: list[NamedLinear] = []
    for index in range(layers):
        prefix = f"model.layers.{index}"
        for name, shape in zip(_attention_names(cfg, prefix), attention, strict=True):
            found.append(NamedLinear(name, "attention", shape, index))
        found.append(NamedLinear(f"{prefix}.mlp.router", "router", (moe.experts, hidden), index))
        for _expert in range(moe.experts):
            base = f"{prefix}.mlp.experts"
            found.append(NamedLinear(f"{base}.gate_up_proj", "experts", (2 * inter, hidden), index))
            found.append(NamedLinear(f"{base}.down_proj", "experts", (hidden, inter), index))
    vocab = _int(cfg, "vocab_size", default=0) or 0
    if vocab and not cfg.get("tie_word_embeddings", False):
        found.append(NamedLinear("lm_head", "lm_head", (vocab, hidden)))
    return found
