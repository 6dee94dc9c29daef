"""Memory facts: weight bytes (stored and what-if precisions), KV cache and context length.

KV cache per token is what each token of context adds: 2 × KV heads × head dim per
attention layer (GQA/MQA), ``kv_lora_rank + qk_rope_head_dim`` per layer for MLA (the
compressed cache serving engines keep), nothing for linear-attention / Mamba layers (their
state is constant: ``details.constant_state_bytes``); the sliding-window layers' share
(``details.sliding_bytes_per_token``) stops growing at the window. Cache elements take the
dtype the cache is served in (:func:`cache_dtype`): the one asked for (``--kv-dtype``), else
FP8 when the config or its quantization says the cache is quantized, else the serving
default — FP16 for a float16 model, BF16 otherwise (serving engines run an FP32 checkpoint
in BF16: its ``torch_dtype`` does not make the cache FP32).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from cardaudit.extract.config_count import (
    count_from_config,
    head_dims,
    layer_kinds,
    model_type,
    text_config,
)
from cardaudit.extract.quantization import (
    CONFIG_DTYPES,
    DTYPE_BYTES,
    WHAT_IF_BYTES,
    config_dtype,
    quantization_of,
)
from cardaudit.extract.stored_bytes import DerivedBytes, derive_stored_bytes
from cardaudit.model import Evidence, MemoryFacts, ParameterFacts

#: Rope scaling types that extend the context beyond max_position_embeddings.
EXTENDS = ("yarn", "dynamic")


def _int(cfg: Mapping[str, Any], key: str, default: int = 0) -> int:
    value = cfg.get(key)
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else default


#: ``--kv-dtype`` values and the dtype each stands for ("auto": the serving default).
KV_DTYPES: Mapping[str, str] = {
    "bf16": "BF16",
    "fp16": "F16",
    "fp32": "F32",
    "fp8": "F8_E4M3",
    "fp8_e4m3": "F8_E4M3",
    "fp8_e5m2": "F8_E5M2",
}


def _quantized_cache(config: Mapping[str, Any]) -> str | None:
    """Why the config says the KV cache is stored in FP8, or None.

    compressed-tensors ``kv_cache_scheme`` (8-bit float), ModelOpt ``kv_cache_quant_algo``
    FP8, and a ``kv_cache_dtype`` / ``cache_dtype`` field naming an FP8 type."""
    cfg = text_config(config)
    quant = config.get("quantization_config")
    if not isinstance(quant, Mapping):
        quant = cfg.get("quantization_config")
    quant = quant if isinstance(quant, Mapping) else {}
    named = str(quant.get(QUANT_SOURCE) or "quantization_config")
    scheme = quant.get("kv_cache_scheme")
    if isinstance(scheme, Mapping) and scheme.get("num_bits") == 8:
        kind = str(scheme.get("type") or "float")
        return f"{named}.kv_cache_scheme ({kind}, 8 bits)"
    algo = quant.get("kv_cache_quant_algo")
    if isinstance(algo, str) and algo.upper().startswith("FP8"):
        return f"{named}.kv_cache_quant_algo {algo}"
    for source, where in ((cfg, "config"), (quant, named)):
        for key in ("kv_cache_dtype", "cache_dtype"):
            value = source.get(key)
            if isinstance(value, str) and "fp8" in value.lower().replace("float8", "fp8"):
                return f"{where}.{key} {value}"
    return None


#: Key marking a quantization_config that came from another file (hf_quant_config.json).
QUANT_SOURCE = "_read_from"
MODELOPT_FILE = "hf_quant_config.json"


def serving_config(evidence: Evidence) -> Mapping[str, Any] | None:
    """config.json as the KV cache is sized from: when it has no quantization_config and the
    repo ships ModelOpt's ``hf_quant_config.json``, that file's ``quantization`` section
    (where ModelOpt exports say ``kv_cache_quant_algo: FP8``) stands in for it."""
    config = evidence.config if isinstance(evidence.config, Mapping) else None
    if config is None or isinstance(text_config(config).get("quantization_config"), Mapping):
        return config
    if isinstance(config.get("quantization_config"), Mapping):
        return config
    modelopt = evidence.json_file(MODELOPT_FILE)
    section = modelopt.get("quantization") if isinstance(modelopt, Mapping) else None
    if not isinstance(section, Mapping):
        return config
    quant = {"quant_method": "modelopt", **section, QUANT_SOURCE: f"{MODELOPT_FILE} quantization"}
    return {**config, "quantization_config": quant}


def cache_dtype(config: Mapping[str, Any], requested: str | None = None) -> tuple[str, str]:
    """(dtype of the served KV cache, why): see the module docstring for the order."""
    if requested and requested.lower() != "auto":
        dtype = KV_DTYPES.get(requested.lower())
        if dtype is None:
            raise ValueError(f"unknown KV cache dtype {requested!r}")
        return dtype, f"--kv-dtype {requested.lower()}"
    quantized = _quantized_cache(config)
    if quantized:
        return "F8_E4M3", quantized
    declared = config_dtype(config)
    if declared == "F16":
        return "F16", "serving default for a float16 model"
    if declared in (None, "BF16"):
        return "BF16", "serving default (BF16)"
    return "BF16", f"serving default (BF16; config torch_dtype {declared} is not the cache's)"


def kv_cache(config: Mapping[str, Any], requested: str | None = None) -> dict[str, Any] | None:
    """KV cache figures of a decoder config, or None when it lacks attention sizes;
    ``requested`` is the ``--kv-dtype`` asked for (None or "auto": the serving default)."""
    cfg = text_config(config)
    hidden = _int(cfg, "hidden_size") or _int(cfg, "n_embed") or _int(cfg, "n_embd")
    if not hidden and model_type(cfg) == "mpt":  # not every d_model config caches (LLaDA)
        hidden = _int(cfg, "d_model")
    if not layer_kinds(cfg) or not hidden:
        return None
    dtype, dtype_from = cache_dtype(config, requested)
    element = DTYPE_BYTES[dtype]
    _heads, kv_heads, head_dim = head_dims(cfg)
    kinds = layer_kinds(cfg)
    window = _int(cfg, "sliding_window") or None
    growing = sliding = constant = 0.0
    mla = bool(cfg.get("kv_lora_rank"))
    for kind in kinds:
        if kind == "linear":
            key_heads = _int(cfg, "linear_num_key_heads")
            value_heads = _int(cfg, "linear_num_value_heads", key_heads)
            key_dim = _int(cfg, "linear_key_head_dim")
            value_dim = _int(cfg, "linear_value_head_dim")
            conv = (2 * key_heads * key_dim + value_heads * value_dim) * (
                _int(cfg, "linear_conv_kernel_dim", 4) - 1
            )
            recurrent = value_heads * key_dim * value_dim
            state_bytes = DTYPE_BYTES.get(
                CONFIG_DTYPES.get(str(cfg.get("mamba_ssm_dtype", "")), ""), element
            )
            constant += conv * element + recurrent * state_bytes
            continue
        if kind == "mamba":
            inner = _int(cfg, "mamba_expand", 2) * hidden
            states = _int(cfg, "mamba_d_state", 16) + _int(cfg, "mamba_d_conv", 4)
            constant += inner * states * element
            continue
        if mla:
            per_layer = _int(cfg, "kv_lora_rank") + _int(cfg, "qk_rope_head_dim")
        elif kind == "full" and cfg.get("global_head_dim"):
            global_heads = _int(cfg, "num_global_key_value_heads", kv_heads)
            per_layer = (
                global_heads
                * _int(cfg, "global_head_dim")
                * (1 if cfg.get("attention_k_eq_v") else 2)
            )
        else:
            per_layer = 2 * kv_heads * head_dim
        if kind == "sliding" and window:
            sliding += per_layer * element
        else:
            growing += per_layer * element
    return {
        "bytes_per_token": int(growing + sliding),
        "full_attention_bytes_per_token": int(growing),
        "sliding_bytes_per_token": int(sliding),
        "sliding_window": window if sliding else None,
        "constant_state_bytes": int(constant),
        "element_bytes": element,
        "dtype": dtype,
        "dtype_from": dtype_from,
        "attention": "MLA (kv_lora_rank + qk_rope_head_dim)"
        if mla
        else f"{kv_heads} KV heads × {head_dim} head dim",
        "layers": {kind: kinds.count(kind) for kind in sorted(set(kinds))},
    }


def kv_bytes_at(kv: Mapping[str, Any], tokens: int, batch: int = 1) -> int:
    """KV cache bytes for ``batch`` sequences of ``tokens`` tokens."""
    window = kv.get("sliding_window") or tokens
    sliding = kv["sliding_bytes_per_token"]
    per_sequence = (
        (kv["bytes_per_token"] - sliding) * tokens
        + sliding * min(tokens, window)
        + kv["constant_state_bytes"]
    )
    return int(per_sequence * batch)


#: Config fields that state the longest sequence a model was built for, in the order they
#: are preferred when several are present (GPT-2/J ``n_positions``, ChatGLM / Qwen v1
#: ``seq_length``, MPT ``max_seq_len``, Baichuan ``model_max_length``...).
CONTEXT_FIELDS = (
    "max_position_embeddings",
    "max_sequence_length",
    "seq_length",
    "max_seq_len",
    "n_positions",
    "n_ctx",
    "model_max_length",
)


def max_context(config: Mapping[str, Any]) -> dict[str, Any]:
    """The configured context (the first of :data:`CONTEXT_FIELDS` present, every one found
    kept in ``fields``) and what rope scaling extends it to."""
    cfg = text_config(config)
    fields = {key: _int(cfg, key) for key in CONTEXT_FIELDS if _int(cfg, key)}
    attn = cfg.get("attn_config")
    if isinstance(attn, Mapping) and _int(attn, "max_seq_len") and "max_seq_len" not in fields:
        fields["attn_config.max_seq_len"] = _int(attn, "max_seq_len")
    field = next(iter(fields), None)
    max_pos = fields[field] if field else 0
    scaling = cfg.get("rope_scaling")
    if not isinstance(scaling, Mapping):
        params = cfg.get("rope_parameters")
        if isinstance(params, Mapping) and isinstance(params.get("full_attention"), Mapping):
            params = params["full_attention"]  # per layer type: the full-attention layers'
        scaling = params if isinstance(params, Mapping) and params.get("factor") else None
    effective = max_pos
    if isinstance(scaling, Mapping):
        factor = scaling.get("factor")
        original = _int(scaling, "original_max_position_embeddings") or _int(
            cfg, "original_max_position_embeddings"
        )
        kind = str(scaling.get("rope_type") or scaling.get("type") or "")
        if isinstance(factor, int | float) and factor > 1:
            base = original or max_pos
            # Only YaRN / dynamic NTK extend beyond max_position_embeddings; llama3,
            # longrope and linear configs already state the extended length there.
            if kind in EXTENDS:
                effective = max(max_pos, int(base * factor))
    return {
        "max_position_embeddings": max_pos or None,
        "field": field,
        "fields": fields,
        "rope_scaling": dict(scaling) if isinstance(scaling, Mapping) else None,
        "effective": effective or None,
    }


def _gb(value: float) -> dict[str, float]:
    return {"GB": round(value / 1e9, 2), "GiB": round(value / 2**30, 2)}


def weight_bytes(
    evidence: Evidence, params: ParameterFacts, derived: DerivedBytes | None = None
) -> tuple[int | None, str | None]:
    """Bytes of the weights as stored, and how that figure was obtained: the files' own
    figures (headers' tensor bytes, the index's ``total_size``, shard sizes minus headers)
    whenever they are known, else derived from config.json for its storage format
    (:mod:`cardaudit.extract.stored_bytes`)."""
    details = params.details
    if params.source in ("safetensors", "gguf"):
        return int(details.get("stored_bytes") or 0), f"{params.source} headers (tensor bytes)"
    if params.source == "hub":
        return int(details.get("stored_bytes") or 0), "Hub shard sizes minus their headers"
    if params.source == "index":
        index = details.get("index", "model.safetensors.index.json")
        return int(details["index_total_size"]), f"{index} total_size"
    if params.source == "config" and params.total:
        derived = derived or _derived(evidence)
        if derived is not None:
            return derived.bytes, f"derived from config.json: {derived.method}"
        quant = quantization_of(evidence.config)
        if quant.bits:
            return (
                int(params.total * quant.bits / 8),
                f"config count × {quant.bits} bits (approximate: the scales and unquantized "
                f"layers of {quant.label} are not enumerated)",
            )
        dtype = config_dtype(evidence.config) or "BF16"
        per = DTYPE_BYTES.get(dtype, 2)
        return int(params.total * per), f"config count × {per:g} bytes ({dtype})"
    return None, None


def _derived(evidence: Evidence, params: ParameterFacts | None = None) -> DerivedBytes | None:
    """The config derivation; beside stored files (``params`` not from config), with the
    MTP layers and dtype the files show."""
    config = evidence.config
    if not isinstance(config, Mapping):
        return None
    count = count_from_config(config)
    if count is None:
        return None
    if params is None or params.source == "config":
        return derive_stored_bytes(config, count)
    details = params.details
    with_mtp = bool(details.get("mtp") or details.get("has_mtp_tensors"))
    dtype = details.get("dtype_inferred")
    if dtype is None and params.source == "safetensors" and params.by_dtype:
        floats = {k: v for k, v in params.by_dtype.items() if k in ("BF16", "F16", "F32")}
        dtype = max(floats, key=floats.__getitem__) if floats else None
    derived = derive_stored_bytes(config, count, with_mtp=with_mtp, dtype=dtype)
    twice = details.get("tied_head_stored_twice")
    if derived is None or not isinstance(twice, int) or not twice:
        return derived
    extra = twice * DTYPE_BYTES.get(dtype or "BF16", 2)
    return replace(
        derived,
        bytes=derived.bytes + extra,
        method=f"{derived.method}; + the tied LM head, which the index lists a second time",
        parts={**derived.parts, "tied_head_stored_twice": twice},
    )


def _weights_details(evidence: Evidence, params: ParameterFacts) -> dict[str, Any] | None:
    """``details.weights``: the bytes, where they come from, and beside a stored figure the
    config derivation with its difference (a check on both)."""
    derived = _derived(evidence, params)
    stored, how = weight_bytes(evidence, params, derived)
    if stored is None:
        return None
    weights: dict[str, Any] = {"bytes": stored, **_gb(stored), "from": how}
    if params.source == "config":
        if derived is not None:
            weights["derived_parts"] = dict(derived.parts)
            if derived.alternative is not None:
                weights["alternative_bytes"] = derived.alternative
        return weights
    if derived is not None and stored:
        weights["derived"] = {
            "bytes": derived.bytes,
            "method": derived.method,
            "difference": round((derived.bytes - stored) / stored, 6),
        }
    return weights


def memory_facts(
    evidence: Evidence,
    params: ParameterFacts,
    stated_context: int | None = None,
    *,
    kv_batch: int,
    kv_dtype: str | None = None,
) -> MemoryFacts:
    """Memory facts; ``stated_context`` is the context length the card states, if any,
    ``kv_batch`` the batch the KV cache is shown for beside batch 1 and ``kv_dtype`` the
    cache dtype asked for (``--kv-dtype``; None: the serving default)."""
    weights = _weights_details(evidence, params)
    stored = weights["bytes"] if weights else None
    details: dict[str, Any] = {}
    if weights is not None:
        details["weights"] = weights
    if params.total:
        details["what_if"] = {
            name: {"bytes": int(params.total * per), **_gb(params.total * per)}
            for name, per in WHAT_IF_BYTES.items()
        }
        details["what_if_note"] = "weights only; INT4 without group-scale overhead"
    config = evidence.config if isinstance(evidence.config, Mapping) else None
    served = serving_config(evidence)
    kv = kv_cache(served, kv_dtype) if served else None
    context = max_context(config) if config else {}
    length = stated_context or context.get("effective")
    if context:
        details["context"] = {**context, "stated": stated_context}
    if kv is not None:
        details["kv_cache"] = dict(kv)
        if length:
            details["kv_cache"]["at_context"] = {
                "tokens": length,
                "batch_1": {"bytes": kv_bytes_at(kv, length), **_gb(kv_bytes_at(kv, length))},
                f"batch_{kv_batch}": {
                    "bytes": kv_bytes_at(kv, length, kv_batch),
                    **_gb(kv_bytes_at(kv, length, kv_batch)),
                },
            }
    return MemoryFacts(
        weight_bytes=stored,
        kv_cache_bytes_per_token=kv["bytes_per_token"] if kv else None,
        context_length=length,
        details=details,
    )
