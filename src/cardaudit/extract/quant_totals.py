"""Verify a config-only parameter count against the Hub's per-dtype totals of a quantized repo.

The Hub's ``safetensors`` totals of a quantized checkpoint count stored elements: quantized
weights (FP8, or int4 packed eight to an I32), their scales, zero points and indices, and
everything kept in floating point. They are not parameters, but they can prove a config
count exact, with cardaudit's own equations for what each scheme stores:

* FP8 block-scaled (:func:`verify_fp8_block`): the F8_E4M3 total equals the elements of the
  linear weights the config quantizes; the F32 total holds at least the scale blocks those
  weights imply (``ceil(out/block) * ceil(in/block)`` each); all elements minus the scale
  blocks equal the config's parameters (MTP layers included) plus the buffers the checkpoint
  stores (DeepSeek's ``e_score_correction_bias``).
* GPTQ / AWQ (:func:`verify_packed_int`): the I32 total equals the packed weights, zero
  points and GPTQ ``g_idx`` of the quantized linears; the floating-point total equals their
  group scales plus every parameter left unquantized.

Anything else (other schemes, layouts not enumerated, a failed equation) gets ``None`` and
the repo's headers are read in full.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import product
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
FP8_VERIFICATION = (
    "F8_E4M3 total = the linear weights the config quantizes; F32 total holds their "
    "block scales (ceil(out/block) x ceil(in/block) each); all elements minus the "
    "scales = the config count (MTP included) + stored buffers; the Hub's totals are "
    "bound to this commit by the shard sizes"
)
#: Packed-integer schemes and the dtype their packed tensors use.
PACKED_SCHEMES = ("gptq", "awq")
PACKED_INT = "I32"
PACKED_BITS = (2, 3, 4, 8)
PACKED_REPO_DTYPES = {PACKED_INT, "BF16", "F16", "F32"}
PACKED_VERIFICATION = (
    "{method}: I32 total = packed weights (in x out x bits / 32) + packed zero points "
    "(groups x out x bits / 32){g_idx} of the quantized linears; floating-point total = "
    "their scales (groups x out) + the config count - their parameters; exactly one "
    "combination of quantized families fits; the Hub's totals are bound to this commit by "
    "the shard sizes"
)


@dataclass(frozen=True)
class VerifiedCount:
    """Exact parameters of a quantized repo, proven by the Hub's per-dtype totals."""

    total: int
    by_dtype: Mapping[str, int]
    quantized: int
    scales: int
    #: Tensors stored beside the parameters transformers counts: DeepSeek's
    #: ``e_score_correction_bias``, the zero biases older GPTQ tools write.
    buffers: int
    mtp: int
    experts: int
    #: "fp8-block", "gptq" or "awq".
    scheme: str
    #: Bytes of scales, zero points and indices (storage, not parameters).
    aux_bytes: int
    #: The linear families found quantized (see :class:`LinearFamilies`).
    quantized_families: tuple[str, ...]
    #: The equations that held, in words.
    verification: str


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


@dataclass(frozen=True)
class LinearFamilies:
    """(out, in) of the linear weights a quantizer may convert, by family: ``attention``,
    ``experts`` (routed), ``shared_experts``, ``dense_mlp`` (decoder layers), ``mtp`` (every
    linear of the MTP layers), ``router`` and ``lm_head``; ``expert_parameters`` are the routed
    experts' parameters in every layer, MTP included."""

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
    outside what is enumerated here (hybrid attention, vision towers, gpt-oss, Gemma...)."""
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
    families: dict[str, list[tuple[int, int]]] = {
        name: []
        for name in ("attention", "experts", "shared_experts", "dense_mlp", "mtp", "router")
    }
    experts = mtp_experts = 0
    biased: dict[str, int] = {}
    attention_biases = _attention_bias_outputs(cfg, attention)
    for index in range(layers + mtp):
        in_mtp = index >= layers
        layer: dict[str, list[tuple[int, int]]] = {"attention": list(attention)}
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


#: What an FP8 block-scaled checkpoint quantizes: every decoder and MTP linear but the routers.
FP8_FAMILIES = ("attention", "experts", "shared_experts", "dense_mlp", "mtp")


def fp8_linears(config: Mapping[str, Any]) -> tuple[list[tuple[int, int]], int] | None:
    """(out, in) of every linear weight an FP8 checkpoint quantizes (decoder and MTP layers;
    not embeddings, LM head or routers), and the routed-expert parameters; None when the
    architecture is outside what is enumerated here."""
    layout = linear_families(config)
    if layout is None:
        return None
    return layout.linears(FP8_FAMILIES), layout.expert_parameters


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


def _quant_config(config: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    if not isinstance(config, Mapping):
        return None
    quant = config.get("quantization_config")
    return quant if isinstance(quant, Mapping) else None


def verify_quantized(
    config: Mapping[str, Any] | None, hub_parameters: Mapping[str, int]
) -> VerifiedCount | None:
    """The config count of a quantized repo, if the Hub's per-dtype totals prove it exact:
    FP8 block-scaled (:func:`verify_fp8_block`) or GPTQ / AWQ packed integers
    (:func:`verify_packed_int`); None for every other scheme or a failed equation."""
    quant = _quant_config(config)
    method = str((quant or {}).get("quant_method")).lower()
    if method == "fp8":
        return verify_fp8_block(config, hub_parameters)
    if method in PACKED_SCHEMES:
        return verify_packed_int(config, hub_parameters)
    return None


def verify_fp8_block(
    config: Mapping[str, Any] | None, hub_parameters: Mapping[str, int]
) -> VerifiedCount | None:
    """The config count, if the Hub's per-dtype totals prove it exact (see module doc)."""
    quant = _quant_config(config)
    if quant is None or str(quant.get("quant_method")).lower() != "fp8":
        return None
    block = quant.get("weight_block_size")
    if not isinstance(block, list) or len(block) != 2 or not all(_positive(b) for b in block):
        return None
    if quant.get("modules_to_not_convert") or quant.get("ignored_layers"):
        return None  # which weights stay unquantized is not enumerated
    if set(hub_parameters) - FP8_REPO_DTYPES or FP8 not in hub_parameters:
        return None
    assert config is not None
    count = count_from_config(config)
    layout = linear_families(config)
    if count is None or layout is None:
        return None
    linears = layout.linears(FP8_FAMILIES)
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
    return VerifiedCount(
        total=parameters,
        by_dtype=_nonzero(by_dtype),
        quantized=quantized,
        scales=scales,
        buffers=buffers,
        mtp=count.components.get("mtp", 0),
        experts=layout.expert_parameters,
        scheme="fp8-block",
        aux_bytes=4 * scales,  # F32 weight_scale_inv blocks
        quantized_families=tuple(f for f in FP8_FAMILIES if f in layout.families),
        verification=FP8_VERIFICATION,
    )


@dataclass(frozen=True)
class PackedScheme:
    """How a GPTQ / AWQ checkpoint stores one quantized linear (out, in)."""

    method: str
    bits: int
    group: int

    def stored(self, out: int, inp: int) -> tuple[int, int] | None:
        """(I32 elements, scale elements) of one linear: the packed ``qweight``, the packed
        ``qzeros`` per group, GPTQ's ``g_idx`` (one per input), and one scale per group
        and output; None when the shapes cannot be packed this way."""
        group = inp if self.group <= 0 else self.group
        groups = _ceil(inp, group)
        if (out * self.bits) % 32 or (inp * self.bits) % 32:
            return None
        if self.method == "awq" and inp % group:
            return None
        qweight = inp * out * self.bits // 32
        qzeros = groups * out * self.bits // 32
        g_idx = inp if self.method == "gptq" else 0
        return qweight + qzeros + g_idx, groups * out


def packed_scheme(quant: Mapping[str, Any]) -> PackedScheme | None:
    """The GPTQ / AWQ layout ``quantization_config`` declares, if it is one enumerated here
    (GPTQ checkpoint format ``gptq`` / ``gptq_v2``; AWQ ``gemm``); None otherwise."""
    method = str(quant.get("quant_method")).lower()
    bits = quant.get("bits", quant.get("w_bit"))
    group = quant.get("group_size", quant.get("q_group_size"))
    if method not in PACKED_SCHEMES or not _positive(bits) or bits not in PACKED_BITS:
        return None
    if not isinstance(group, int) or isinstance(group, bool) or group == 0 or group < -1:
        return None
    if str(quant.get("pack_dtype") or "int32").lower().removeprefix("torch.") != "int32":
        return None  # GPTQModel can pack into int16 / int8 words
    if method == "gptq":
        fmt = quant.get("checkpoint_format") or quant.get("format") or "gptq"
        if str(fmt).lower() not in ("gptq", "gptq_v2"):
            return None  # marlin, bitblas...: other shapes
    elif str(quant.get("version") or "gemm").lower() != "gemm" or bits != 4:
        return None  # gemv, gemv_fast, marlin: other shapes
    return PackedScheme(method, bits, group)


def verify_packed_int(
    config: Mapping[str, Any] | None, hub_parameters: Mapping[str, int]
) -> VerifiedCount | None:
    """The config count of a GPTQ / AWQ repo, if the Hub's per-dtype totals prove it exact.

    Which linear families were quantized (attention, routed / shared experts, dense MLPs,
    MTP layers, routers, LM head) varies between quantizers, so every combination is tried,
    with the MTP layers stored or dropped, and with or without the zero biases older GPTQ
    tools store for every quantized linear (counted as stored buffers, as reading the
    headers would count them). One must satisfy both equations exactly, and every
    combination that does must give the same figures:

    * the I32 total = the packed weights, packed zero points and GPTQ ``g_idx`` of the
      quantized linears;
    * the floating-point total = their group scales + the config's parameters (plus stored
      buffers) − the quantized linears' parameters.
    """
    quant = _quant_config(config)
    scheme = packed_scheme(quant) if quant is not None else None
    if scheme is None or config is None:
        return None
    if set(hub_parameters) - PACKED_REPO_DTYPES or PACKED_INT not in hub_parameters:
        return None
    count = count_from_config(config)
    layout = linear_families(config)
    if count is None or layout is None:
        return None
    # Per family that can be packed this way: I32 elements, scale elements, parameters.
    sums: dict[str, tuple[int, int, int]] = {}
    for family, shapes in layout.families.items():
        stored = [scheme.stored(out, inp) for out, inp in shapes]
        if all(elements is not None for elements in stored):
            i32 = sum(elements[0] for elements in stored if elements)
            scale = sum(elements[1] for elements in stored if elements)
            sums[family] = (i32, scale, sum(out * inp for out, inp in shapes))
    floats = sum(n for dtype, n in hub_parameters.items() if dtype != PACKED_INT)
    mtp = count.components.get("mtp", 0)
    matches: dict[tuple[int, int, int, int], tuple[tuple[str, ...], bool]] = {}
    for chosen in _subsets(sorted(sums)):
        packed, scales, quantized = (sum(sums[family][i] for family in chosen) for i in range(3))
        if packed != hub_parameters[PACKED_INT]:
            continue
        zero_biases = layout.unbiased_outputs(chosen)
        for with_mtp, biases in product((True, False) if mtp else (True,), (0, zero_biases)):
            if not with_mtp and "mtp" in chosen:
                continue
            buffers = stored_buffers(config, with_mtp=with_mtp) + biases
            parameters = count.total + (mtp if with_mtp else 0) + buffers
            if floats == scales + parameters - quantized:
                matches[(parameters, quantized, scales, buffers)] = (chosen, with_mtp)
    if len(matches) != 1:
        return None  # no combination fits, or the totals cannot tell two apart
    ((parameters, quantized, scales, buffers), (chosen, with_mtp)) = next(iter(matches.items()))
    scale_dtype = next(
        (d for d in ("F16", "BF16", "F32") if hub_parameters.get(d, 0) >= scales), None
    )
    if scale_dtype is None:
        return None
    by_dtype = {k: v for k, v in hub_parameters.items() if k != PACKED_INT}
    by_dtype[scale_dtype] -= scales
    by_dtype[f"INT{scheme.bits}"] = quantized
    packed_weights = quantized * scheme.bits // 32
    width = 4 if scale_dtype == "F32" else 2
    return VerifiedCount(
        total=parameters,
        by_dtype=_nonzero(by_dtype),
        quantized=quantized,
        scales=scales,
        buffers=buffers,
        mtp=mtp if with_mtp else 0,
        experts=layout.expert_parameters - (0 if with_mtp else layout.mtp_expert_parameters),
        scheme=scheme.method,
        aux_bytes=4 * (hub_parameters[PACKED_INT] - packed_weights) + width * scales,
        quantized_families=chosen,
        verification=PACKED_VERIFICATION.format(
            method=scheme.method.upper(),
            g_idx=" + g_idx (one per input)" if scheme.method == "gptq" else "",
        ),
    )


def _subsets(names: list[str]) -> Iterable[tuple[str, ...]]:
    """Every non-empty combination of ``names``."""
    for mask in range(1, 1 << len(names)):
        yield tuple(name for bit, name in enumerate(names) if mask >> bit & 1)


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _nonzero(by_dtype: Mapping[str, int]) -> dict[str, int]:
    return {dtype: n for dtype, n in sorted(by_dtype.items()) if n}
