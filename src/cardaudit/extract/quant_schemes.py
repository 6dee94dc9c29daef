"""What a quantized checkpoint stores for one linear weight, scheme by scheme.

Each scheme answers, for a linear of shape (out, in): the elements it stores in its
non-float dtypes (quantized weights, packed zero points, indices, shapes) and the number of
floating-point scale elements. :func:`scheme_of` reads the scheme from ``quantization_config``
and returns None for anything not enumerated here (bitsandbytes, Marlin / GEMV layouts,
asymmetric compressed-tensors, several config groups...), so its totals prove nothing.

Shapes, per format (``g`` the group size, ``b`` the bits):

* FP8 block (``quant_method: fp8``): ``weight`` F8_E4M3 (out, in); ``weight_scale_inv``
  (ceil(out/b0), ceil(in/b1)).
* GPTQ (``gptq`` / ``gptq_v2`` format): ``qweight`` I32 (in·b/32, out); ``qzeros`` I32
  (ceil(in/g), out·b/32); ``g_idx`` I32 (in); ``scales`` (ceil(in/g), out).
* AWQ GEMM: ``qweight`` I32 (in, out·b/32); ``qzeros`` I32 (in/g, out·b/32); ``scales``
  (in/g, out).
* compressed-tensors ``pack-quantized`` (symmetric int): ``weight_packed`` I32
  (out, ceil(in·b/32)); ``weight_shape`` I64 (2); ``weight_scale`` (out, groups).
* compressed-tensors ``float-quantized`` / ``int-quantized`` (symmetric): ``weight``
  F8_E4M3 / I8 (out, in); ``weight_scale`` per channel, tensor, group or block; an
  ``input_scale`` (1) per linear when activations are quantized statically.
* NVFP4 (compressed-tensors ``nvfp4-pack-quantized``, NVIDIA ModelOpt): U8 (out, in/2),
  an E4M3 scale per 16 values, and one or two F32 scalars per linear; ModelOpt FP8: E4M3
  (out, in) and two scalars.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

#: Floating-point dtypes: unquantized parameters and scales.
FLOAT_DTYPES = frozenset({"BF16", "F16", "F32"})
WIDTHS: Mapping[str, int] = {
    "F8_E4M3": 1,
    "I8": 1,
    "U8": 1,
    "F16": 2,
    "BF16": 2,
    "I32": 4,
    "F32": 4,
    "I64": 8,
}
#: One linear's storage: elements per non-float dtype, and float scale elements.
Stored = tuple[Mapping[str, int], int]


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


@dataclass(frozen=True)
class StorageScheme:
    """How one quantization format stores a linear weight."""

    #: Short name reported in ``details.scheme``.
    name: str
    #: The dtype of the quantized weights (present in every repo of this scheme).
    quantized_dtype: str
    #: Every non-float dtype the scheme writes; their Hub totals must match exactly.
    dtypes: frozenset[str]
    #: The ``by_dtype`` label of the quantized weights (as reading the headers labels them).
    label: str
    #: Bits per quantized weight.
    bits: int
    #: Where the scales are, in order of likelihood, when no float total equals them.
    scale_dtypes: tuple[str, ...]
    #: The per-linear storage, in words (for ``details.verification``).
    equations: str
    #: What one (out, in) linear stores; None when it cannot be stored this way.
    stored: Callable[[int, int], Stored | None]
    #: Whether the tools of this scheme may store a zero bias beside every quantized linear.
    zero_biases: bool = False


def _fp8_block_linear(block: tuple[int, int], out: int, inp: int) -> Stored | None:
    return {"F8_E4M3": out * inp}, _ceil(out, block[0]) * _ceil(inp, block[1])


def _packed_int_linear(method: str, bits: int, group: int, out: int, inp: int) -> Stored | None:
    group = inp if group <= 0 else group
    groups = _ceil(inp, group)
    if (out * bits) % 32 or (inp * bits) % 32:
        return None
    if method == "awq" and inp % group:
        return None
    qweight = inp * out * bits // 32
    qzeros = groups * out * bits // 32
    g_idx = inp if method == "gptq" else 0
    return {"I32": qweight + qzeros + g_idx}, groups * out


def _compressed_linear(
    fmt: str, bits: int, scales: Callable[[int, int], int], static_input: bool, out: int, inp: int
) -> Stored | None:
    count = scales(out, inp) + (1 if static_input else 0)
    if fmt == "pack-quantized":
        return {"I32": out * _ceil(inp, 32 // bits), "I64": 2}, count
    return {"F8_E4M3" if fmt == "float-quantized" else "I8": out * inp}, count


def _nvfp4_linear(floats: int, out: int, inp: int) -> Stored | None:
    """Two FP4 values a byte, one E4M3 scale per 16, and ``floats`` F32 scalars."""
    return {"U8": out * _ceil(inp, 2), "F8_E4M3": out * _ceil(inp, 16)}, floats


def _fp8_tensor_linear(floats: int, out: int, inp: int) -> Stored | None:
    return {"F8_E4M3": out * inp}, floats


def _nvfp4(name: str, floats: int, equations: str) -> StorageScheme:
    return StorageScheme(
        name=name,
        quantized_dtype="U8",
        dtypes=frozenset({"U8", "F8_E4M3"}),
        label="NVFP4",
        bits=4,
        scale_dtypes=("F32", "BF16", "F16"),
        equations=equations,
        stored=partial(_nvfp4_linear, floats),
    )


def scheme_of(quant: Mapping[str, Any] | None) -> StorageScheme | None:
    """The storage scheme ``quantization_config`` declares, if it is enumerated here."""
    if not isinstance(quant, Mapping):
        return None
    method = str(quant.get("quant_method")).lower()
    if method == "fp8":
        return _fp8_block(quant)
    if method in ("gptq", "awq"):
        return _packed_int(method, quant)
    if method == "compressed-tensors":
        if str(quant.get("format")).lower() == "nvfp4-pack-quantized":
            return _compressed_nvfp4(quant)
        return _compressed_tensors(quant)
    if method == "modelopt":
        return _modelopt(quant)
    return None


def _modelopt(quant: Mapping[str, Any]) -> StorageScheme | None:
    """NVIDIA ModelOpt NVFP4 (``weight`` U8, ``weight_scale`` E4M3 per 16 values,
    ``weight_scale_2`` and ``input_scale`` F32 scalars) or per-tensor FP8 (``weight``
    E4M3, ``weight_scale`` and ``input_scale`` scalars). A quantized KV cache adds scales
    per attention layer: not enumerated."""
    algo = str(quant.get("quant_algo")).upper()
    if quant.get("kv_cache_quant_algo"):
        return None
    if algo == "NVFP4" and quant.get("group_size", 16) == 16:
        return _nvfp4(
            "modelopt NVFP4",
            2,
            "ModelOpt NVFP4: U8 = out x ceil(in/2), F8_E4M3 = out x ceil(in/16) "
            "(weight_scale); 2 F32 scalars per linear (weight_scale_2, input_scale)",
        )
    if algo == "FP8":
        return _fp8_scheme(
            "modelopt FP8",
            ("F32", "BF16", "F16"),
            "ModelOpt FP8: F8_E4M3 = out x in; 2 scalars per linear",
            partial(_fp8_tensor_linear, 2),
        )
    return None


def _compressed_nvfp4(quant: Mapping[str, Any]) -> StorageScheme | None:
    """compressed-tensors ``nvfp4-pack-quantized``: ``weight_packed`` U8, ``weight_scale``
    E4M3 per 16 values, a ``weight_global_scale`` and, when activations are quantized too,
    an ``input_global_scale`` (F32)."""
    group = _linear_group(quant)
    if group is None:
        return None
    weights, inputs = group
    if weights.get("type") != "float" or weights.get("num_bits") != 4:
        return None
    if weights.get("group_size") != 16:
        return None
    floats = 2 if isinstance(inputs, Mapping) else 1
    return _nvfp4(
        "compressed-tensors nvfp4-pack-quantized",
        floats,
        "compressed-tensors NVFP4: U8 = out x ceil(in/2) (weight_packed), F8_E4M3 = "
        f"out x ceil(in/16) (weight_scale); {floats} F32 global scale(s) per linear",
    )


def _linear_group(quant: Mapping[str, Any]) -> tuple[Mapping[str, Any], Any] | None:
    """The weights and input-activations schemes of a compressed-tensors config with one
    config group on every Linear and no extra tensors; None otherwise."""
    groups = quant.get("config_groups")
    if not isinstance(groups, Mapping) or len(groups) != 1:
        return None  # several schemes in one checkpoint: which linear has which is unknown
    if any(quant.get(key) for key in ("kv_cache_scheme", "sparsity_config", "transform_config")):
        return None  # extra tensors (k/v scales, sparsity metadata, transforms)
    (group,) = groups.values()
    if not isinstance(group, Mapping) or group.get("targets") != ["Linear"]:
        return None
    weights = group.get("weights")
    if not isinstance(weights, Mapping) or group.get("output_activations"):
        return None
    return weights, group.get("input_activations")


def _fp8_scheme(
    name: str, scale_dtypes: tuple[str, ...], equations: str, stored: Callable
) -> StorageScheme:
    """FP8 E4M3 weights, one stored element per parameter."""
    return StorageScheme(
        name=name,
        quantized_dtype="F8_E4M3",
        dtypes=frozenset({"F8_E4M3"}),
        label="F8_E4M3",
        bits=8,
        scale_dtypes=scale_dtypes,
        equations=equations,
        stored=stored,
    )


def _pair(value: Any) -> tuple[int, int] | None:
    if isinstance(value, list) and len(value) == 2 and all(_positive(v) for v in value):
        return value[0], value[1]
    return None


def _fp8_block(quant: Mapping[str, Any]) -> StorageScheme | None:
    block = _pair(quant.get("weight_block_size"))
    if block is None:
        return None
    return _fp8_scheme(
        "fp8-block",
        ("F32",),
        f"F8_E4M3 = out x in per quantized linear; "
        f"scales = ceil(out/{block[0]}) x ceil(in/{block[1]})",
        partial(_fp8_block_linear, block),
    )


def _packed_int(method: str, quant: Mapping[str, Any]) -> StorageScheme | None:
    bits = quant.get("bits", quant.get("w_bit"))
    group = quant.get("group_size", quant.get("q_group_size"))
    if not _positive(bits) or bits not in (2, 3, 4, 8):
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
    g_idx = " + in (g_idx)" if method == "gptq" else ""
    groups = f"ceil(in/{group})" if group > 0 else "1"
    return StorageScheme(
        name=method,
        quantized_dtype="I32",
        dtypes=frozenset({"I32"}),
        label=f"INT{bits}",
        bits=bits,
        scale_dtypes=("F16", "BF16", "F32"),
        equations=(
            f"{method.upper()}: I32 = in x out x {bits}/32 (qweight) + groups x out x {bits}/32 "
            f"(qzeros){g_idx}; scales = groups x out, groups = {groups}"
        ),
        stored=partial(_packed_int_linear, method, bits, group),
        zero_biases=method == "gptq",  # GPTQ-for-LLaMa and early AutoGPTQ wrote them
    )


def _compressed_tensors(quant: Mapping[str, Any]) -> StorageScheme | None:
    fmt = str(quant.get("format")).lower()
    group = _linear_group(quant)
    if fmt not in ("pack-quantized", "float-quantized", "int-quantized") or group is None:
        return None
    weights, inputs = group
    if weights.get("symmetric") is False or weights.get("actorder") not in (None, "static"):
        return None  # zero points or g_idx tensors: not enumerated
    bits, kind = weights.get("num_bits"), weights.get("type")
    expected = {"pack-quantized": ("int", (2, 4, 8)), "float-quantized": ("float", (8,))}
    wanted_kind, wanted_bits = expected.get(fmt, ("int", (8,)))
    if kind != wanted_kind or not _positive(bits) or bits not in wanted_bits:
        return None
    strategy = str(weights.get("strategy")).lower()
    scales = _scale_count(strategy, weights.get("group_size"), weights.get("block_structure"))
    if scales is None:
        return None
    static_input = isinstance(inputs, Mapping) and inputs.get("dynamic") is False
    quantized_dtype = {"pack-quantized": "I32", "float-quantized": "F8_E4M3"}.get(fmt, "I8")
    packed = fmt == "pack-quantized"
    if packed:
        weights_text = f"I32 = out x ceil(in/{32 // bits}) (weight_packed); I64 = 2 (weight_shape)"
    else:
        weights_text = f"{quantized_dtype} = out x in"
    return StorageScheme(
        name=f"compressed-tensors {fmt}",
        quantized_dtype=quantized_dtype,
        dtypes=frozenset(
            {quantized_dtype, "I64"} if fmt == "pack-quantized" else {quantized_dtype}
        ),
        label=f"INT{bits}" if packed else quantized_dtype,
        bits=bits,
        scale_dtypes=("BF16", "F16", "F32"),
        equations=(
            f"compressed-tensors {fmt}: {weights_text}; {strategy} scales"
            + (" + 1 static input_scale" if static_input else "")
        ),
        stored=partial(_compressed_linear, fmt, bits, scales, static_input),
    )


def _scale_count(strategy: str, group: Any, block: Any) -> Callable[[int, int], int] | None:
    """Scale elements per (out, in) linear for a compressed-tensors weight strategy."""
    if strategy == "tensor":
        return lambda out, inp: 1
    if strategy == "channel":
        return lambda out, inp: out
    if strategy == "group" and _positive(group):
        return lambda out, inp: out * _ceil(inp, group)
    pair = _pair(block)
    if strategy == "block" and pair is not None:
        return lambda out, inp: _ceil(out, pair[0]) * _ceil(inp, pair[1])
    return None
