"""Bytes a checkpoint stores, derived from config.json when no file states them.

Used when the weights' own size is unknown (a config-only repo, a README-only copy); when an
index ``total_size``, shard headers or shard sizes are known, those are the weight bytes and
this derivation is only shown beside them (``details.weights.derived``).

The derivation follows the format the config declares:

* unquantized: parameters (MTP layers included when the config declares them: publishers
  ship them) × the width of ``torch_dtype`` (BF16 when unstated);
* GPTQ / AWQ / FP8 block / compressed-tensors / ModelOpt (:mod:`.quant_schemes`): every
  quantized linear (:func:`.linear_families.named_linears`) stores its packed weights,
  scales, zero points and ``g_idx``; everything else (embeddings, LM head, norms, routers,
  biases, vision towers, linears left unconverted) stays in ``torch_dtype``;
* MXFP4 (gpt-oss): the experts' weights as FP4 blocks (two values a byte) and one E8M0
  scale per 32 values;
* bitsandbytes 4-bit (two values a byte, an F32 absmax per block, or a U8 absmax with F32
  nested scales under double quantization) and 8-bit (one byte a value, one F32 scale per
  output row).

Which linears are quantized is the tool's default for the format, minus the modules the
config leaves unconverted (``modules_to_not_convert``, ``ignore``, ``exclude_modules``,
``llm_int8_skip_modules``: module names, globs or ``re:`` patterns, per layer or for all).
Tools that quantize a transformers model (GPTQ, AWQ, bitsandbytes, compressed-tensors,
ModelOpt) drop the MTP layers transformers does not build; the FP8 block releases
(DeepSeek, Qwen) keep them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from cardaudit.extract.config_count import ConfigCount
from cardaudit.extract.linear_families import (
    linear_families,
    named_linears,
    stored_buffers,
)
from cardaudit.extract.quant_schemes import WIDTHS, scheme_of
from cardaudit.extract.quantization import DTYPE_BYTES, config_dtype


@dataclass(frozen=True)
class DerivedBytes:
    """Bytes a checkpoint of this config stores, how they were derived, and their parts."""

    bytes: int
    method: str
    parts: Mapping[str, int]
    #: Whether the MTP layers are counted in.
    with_mtp: bool = False
    #: A second figure the same format may have been written with (older GPTQ tools' zero
    #: biases), or None.
    alternative: int | None = None


#: Linear families each format quantizes by default (before the config's exclusions).
DEFAULT_FAMILIES: Mapping[str, frozenset[str]] = {
    "gptq": frozenset({"attention", "linear_attention", "dense_mlp", "experts", "shared_experts"}),
    "awq": frozenset({"attention", "linear_attention", "dense_mlp", "experts", "shared_experts"}),
    "fp8": frozenset(
        {"attention", "linear_attention", "dense_mlp", "experts", "shared_experts", "mtp"}
    ),
    "compressed-tensors": frozenset(
        {
            "attention",
            "linear_attention",
            "linear_attention_gates",
            "dense_mlp",
            "experts",
            "shared_experts",
            "router",
            "lm_head",
        }
    ),
    "modelopt": frozenset(
        {"attention", "linear_attention", "dense_mlp", "experts", "shared_experts", "lm_head"}
    ),
    "bitsandbytes": frozenset(
        {
            "attention",
            "linear_attention",
            "linear_attention_gates",
            "dense_mlp",
            "experts",
            "shared_experts",
            "router",
        }
    ),
    "mxfp4": frozenset({"experts"}),
}
#: Formats whose files keep the MTP layers the config declares.
KEEPS_MTP = frozenset({None, "fp8"})
EXCLUSION_KEYS = ("modules_to_not_convert", "ignore", "exclude_modules", "llm_int8_skip_modules")


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _excluded(name: str, patterns: Sequence[str]) -> bool:
    """Whether module ``name`` is left unconverted by one of ``patterns``: an exact name,
    a dotted prefix or component run (``lm_head``, ``model.layers.0.mlp``, ``gate``), a
    glob (``model.layers.*.self_attn``) or a compressed-tensors ``re:`` regex."""
    dotted = f".{name}."
    for pattern in patterns:
        if pattern.startswith("re:"):
            try:
                if re.match(pattern[3:], name):
                    return True
            except re.error:
                continue
        elif "*" in pattern or "?" in pattern:
            parts = name.split(".")
            prefixes = (".".join(parts[:n]) for n in range(1, len(parts) + 1))
            if any(fnmatchcase(prefix, pattern) for prefix in prefixes):
                return True
        elif f".{pattern}." in dotted:
            return True
    return False


def _exclusions(quant: Mapping[str, Any]) -> list[str]:
    found: list[str] = []
    for key in EXCLUSION_KEYS:
        value = quant.get(key)
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, list):
            found += [str(item) for item in value if isinstance(item, str)]
    return found


def _method(quant: Mapping[str, Any]) -> str | None:
    method = str(quant.get("quant_method") or "").lower()
    if method == "bitsandbytes" or quant.get("load_in_4bit") or quant.get("load_in_8bit"):
        return "bitsandbytes"
    return method or None


def derive_stored_bytes(
    config: Mapping[str, Any],
    count: ConfigCount,
    *,
    with_mtp: bool | None = None,
    dtype: str | None = None,
) -> DerivedBytes | None:
    """What a checkpoint of ``config`` stores (see the module doc); None for a quantization
    format, or an architecture, whose storage is not enumerated. ``with_mtp`` and ``dtype``
    say what the files show when they are known (MTP tensors in the index, the dtype the
    headers or ``total_size`` give) instead of the format's defaults."""
    quant = config.get("quantization_config")
    if not isinstance(quant, Mapping):
        text = config.get("text_config")
        quant = text.get("quantization_config") if isinstance(text, Mapping) else None
    dtype = dtype or config_dtype(config) or "BF16"
    width = DTYPE_BYTES.get(dtype, 2) if dtype not in ("F8_E4M3", "I8") else 2
    method = _method(quant) if isinstance(quant, Mapping) else None
    keeps = method in KEEPS_MTP if with_mtp is None else with_mtp
    mtp = count.components.get("mtp", 0) if keeps else 0
    parameters = count.total + mtp
    if method is None:
        return DerivedBytes(
            int(parameters * width),
            f"config count{' with MTP layers' if mtp else ''} × {width:g} bytes ({dtype})",
            {"parameters": parameters},
            with_mtp=bool(mtp),
        )
    assert isinstance(quant, Mapping)
    if method not in DEFAULT_FAMILIES:
        return None
    patterns = _exclusions(quant)
    families = DEFAULT_FAMILIES[method]
    if method in ("gptq", "awq") and quant.get("lm_head"):
        families = families | {"lm_head"}
    families = families if mtp else families - {"mtp"}
    found = _quantized_shapes(config, families, patterns)
    if found is None:
        return None
    shapes, left = found
    stored = _quantized_storage(method, quant, shapes)
    if stored is None:
        return None
    packed, scales, label = stored
    quantized_parameters = sum(out * inp * n for (out, inp), n in shapes.items())
    linears_quantized = sum(shapes.values())
    buffers = stored_buffers(config, with_mtp=bool(mtp)) * 4  # F32 router biases
    floats = (parameters - quantized_parameters) * width
    excluded = f", {left} left unconverted by the config" if patterns and left else ""
    total = int(packed + scales + floats + buffers)
    alternative = None
    note = ""
    if method == "gptq" and "checkpoint_format" not in quant and "meta" not in quant:
        # GPTQ-for-LLaMa and AutoGPTQ before checkpoint_format stored a zero F16 bias for
        # every quantized linear; newer tools do not (the alternative figure).
        biases = 2 * sum(out * n for (out, _), n in shapes.items())
        alternative, total = total, total + biases
        note = f"; {biases:,} bytes of zero biases (older GPTQ tools; no checkpoint_format)"
    return DerivedBytes(
        total,
        f"{label}: {linears_quantized} quantized linears{excluded}; the other "
        f"{parameters - quantized_parameters:,} parameters{' (MTP layers included)' if mtp else ''}"
        f" in {dtype}{note}",
        {
            "quantized_weights": int(packed),
            "scales_zeros_indices": int(scales),
            "unquantized": int(floats),
            "buffers": buffers,
            "quantized_parameters": quantized_parameters,
        },
        with_mtp=bool(mtp),
        alternative=alternative,
    )


def _quantized_shapes(
    config: Mapping[str, Any], families: frozenset[str], patterns: Sequence[str]
) -> tuple[Counter[tuple[int, int]], int] | None:
    """(count of each (out, in) shape quantized, linears left unconverted by ``patterns``).
    Module names are built only when there are patterns to match (naming tens of thousands
    of expert linears costs more than the rest of the audit)."""
    layout = linear_families(config) if not patterns else None
    if layout is not None:
        shapes: Counter[tuple[int, int]] = Counter()
        for family in families & set(layout.families):
            shapes.update(layout.families[family])
        return shapes, 0
    linears = named_linears(config)
    if linears is None:
        return None
    candidates = [linear for linear in linears if linear.family in families]
    quantized = [linear for linear in candidates if not _excluded(linear.name, patterns)]
    return Counter(linear.shape for linear in quantized), len(candidates) - len(quantized)


def _quantized_storage(
    method: str, quant: Mapping[str, Any], shapes: Counter[tuple[int, int]]
) -> tuple[float, float, str] | None:
    """(bytes of the quantized weights, bytes of their scales / zeros / indices, a label)."""
    if method == "mxfp4":
        values = sum(out * inp * n for (out, inp), n in shapes.items())
        scales = sum(out * _ceil(inp, 32) * n for (out, inp), n in shapes.items())
        return values / 2, scales, "MXFP4 (FP4 blocks two a byte, one E8M0 scale per 32)"
    if method == "bitsandbytes":
        return _bitsandbytes(quant, [shape for shape, n in shapes.items() for _ in range(n)])
    scheme = scheme_of(quant)
    if scheme is None:
        return None
    packed = scales = 0.0
    scale_width = 4 if method in ("fp8", "modelopt") or "nvfp4" in scheme.name.lower() else 2
    weights_dtype = scheme.quantized_dtype
    for (out, inp), copies in shapes.items():
        elements = scheme.stored(out, inp)
        if elements is None:
            return None
        stored, scale_elements = elements
        if method in ("gptq", "awq"):
            qweight = inp * out * scheme.bits / 8
            packed += qweight * copies
            scales += (sum(n * WIDTHS[d] for d, n in stored.items()) - qweight) * copies
        else:
            packed += stored.get(weights_dtype, 0) * WIDTHS[weights_dtype] * copies
            others = sum(n * WIDTHS[d] for d, n in stored.items() if d != weights_dtype)
            scales += others * copies
        scales += scale_elements * scale_width * copies
    return packed, scales, scheme.name


def _bitsandbytes(
    quant: Mapping[str, Any], shapes: Sequence[tuple[int, int]]
) -> tuple[float, float, str] | None:
    values = sum(out * inp for out, inp in shapes)
    if quant.get("load_in_4bit"):
        kind = str(quant.get("bnb_4bit_quant_type") or "fp4").upper()
        blocks = sum(-(-(out * inp) // 64) for out, inp in shapes)
        if quant.get("bnb_4bit_use_double_quant"):
            # U8 absmax per block of 64, F32 nested absmax per 256 blocks, 256-value code
            scales = blocks + 4 * sum(_ceil(_ceil(o * i, 64), 256) for o, i in shapes)
            scales += 4 * (16 + 256 + 1) * len(shapes)
        else:
            scales = 4 * blocks + 4 * 16 * len(shapes)
        return values / 2, scales, f"bitsandbytes {kind} (blocks of 64)"
    if quant.get("load_in_8bit"):
        return values, 4 * sum(out for out, _ in shapes), "bitsandbytes int8 (LLM.int8())"
    return None
