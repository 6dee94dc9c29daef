"""Quantized storage: bytes per dtype, packed tensors and quantization side tensors.

A *logical* parameter is one weight of the unquantized model. Packed formats hold several
in one stored element (GPTQ/AWQ ``qweight``: 8 int4 in an int32; MXFP4 ``*_blocks``: 2 fp4
in a byte); quantization side tensors (FP8 block scales, GPTQ scales/zeros/g_idx, MXFP4
scales) are storage, not parameters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from cardaudit.model import TensorInfo

#: Bytes per element of every safetensors dtype (sub-byte types rounded per element).
DTYPE_BYTES: Mapping[str, float] = {
    "F64": 8,
    "I64": 8,
    "U64": 8,
    "F32": 4,
    "I32": 4,
    "U32": 4,
    "F16": 2,
    "BF16": 2,
    "I16": 2,
    "U16": 2,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "F8_E8M0": 1,
    "I8": 1,
    "U8": 1,
    "BOOL": 1,
    "F4": 0.5,
    "F6_E2M3": 0.75,
    "F6_E3M2": 0.75,
}

#: Dtypes that never hold packed sub-byte values.
UNPACKED_DTYPES = frozenset({"F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2", "I64", "BOOL"})

#: Names used in configs for a torch dtype, mapped to safetensors dtype names.
CONFIG_DTYPES: Mapping[str, str] = {
    "bfloat16": "BF16",
    "float16": "F16",
    "half": "F16",
    "float32": "F32",
    "float": "F32",
    "float8_e4m3fn": "F8_E4M3",
    "int8": "I8",
}

#: What-if precisions: bytes per logical parameter.
WHAT_IF_BYTES: Mapping[str, float] = {"BF16": 2, "FP8": 1, "INT4": 0.5}

AUX_SUFFIXES = (
    "weight_scale_inv",
    "weight_scale",
    "input_scale",
    "weight_zero_point",
    ".scales",
    "_scales",
    ".qzeros",
    ".g_idx",
    ".absmax",
    ".quant_map",
    ".quant_state",
    ".nested_absmax",
    ".nested_quant_map",
    ".SCB",
    "weight_global_scale",
    "input_global_scale",
    "weight_scale_2",
    "weight_shape",
)
#: FP4 weights packed two to a byte, recognised by their block scales (a sibling
#: ``weight_scale`` with one scale per this many values): NVFP4 (E4M3 scales, blocks of 16,
#: NVIDIA ModelOpt and compressed-tensors) and MXFP4 (E8M0 scales, blocks of 32).
FP4_BLOCKS: Mapping[str, tuple[int, str]] = {"F8_E4M3": (16, "NVFP4"), "F8_E8M0": (32, "MXFP4")}
_PACKED_INT = re.compile(r"(\.qweight|weight_packed)$")
_MXFP4_BLOCKS = re.compile(r"_blocks$")


@dataclass(frozen=True)
class Quantization:
    """What config.json says about quantized storage."""

    method: str | None = None
    bits: int | None = None
    fmt: str | None = None
    block_size: tuple[int, ...] | None = None

    @property
    def label(self) -> str | None:
        if self.method is None:
            return None
        parts = [self.method]
        if self.fmt:
            parts.append(self.fmt)
        if self.bits:
            parts.append(f"{self.bits}-bit")
        return " ".join(parts)


def quantization_of(config: Mapping[str, Any] | None) -> Quantization:
    """Quantization settings from ``quantization_config`` (or none)."""
    if not isinstance(config, Mapping):
        return Quantization()
    qc = config.get("quantization_config")
    if not isinstance(qc, Mapping):
        text = config.get("text_config")
        qc = text.get("quantization_config") if isinstance(text, Mapping) else None
    if not isinstance(qc, Mapping):
        return Quantization()
    method = str(qc.get("quant_method") or qc.get("quant_type") or "unknown").lower()
    bits = qc.get("bits") or qc.get("w_bit") or qc.get("num_bits") or _group_bits(qc)
    if method == "mxfp4":
        bits = 4
    if method == "fp8":
        bits = 8
    block = qc.get("weight_block_size")
    block_size = tuple(int(b) for b in block) if isinstance(block, list) else None
    fmt = qc.get("fmt") or qc.get("version") or qc.get("format")
    return Quantization(
        method=method,
        bits=int(bits) if isinstance(bits, int | float) else None,
        fmt=str(fmt) if fmt else None,
        block_size=block_size,
    )


def _group_bits(qc: Mapping[str, Any]) -> int | None:
    """The weight bits of a compressed-tensors config, when all its groups agree."""
    groups = qc.get("config_groups")
    if not isinstance(groups, Mapping):
        return None
    bits = {
        group.get("weights", {}).get("num_bits")
        for group in groups.values()
        if isinstance(group, Mapping) and isinstance(group.get("weights"), Mapping)
    }
    return bits.pop() if len(bits) == 1 and isinstance(next(iter(bits)), int) else None


def fp4_labels(tensors: Iterable[TensorInfo]) -> dict[str, str]:
    """Names of the U8 weights that hold two 4-bit values a byte, with their label, read
    from the tensors themselves (so a quantization config kept in another file, such as
    ``hf_quant_config.json``, does not matter): see :class:`Fp4Labels`."""
    found = Fp4Labels()
    for tensor in tensors:
        found.see(tensor)
    return found.labels()


class Fp4Labels:
    """:func:`fp4_labels` fed one tensor at a time (the header walk's single pass):

    * a ``*.weight`` or ``*.weight_packed`` (out, in/2) whose ``*.weight_scale`` sibling
      holds one E4M3 scale per 16 values (NVFP4) or one E8M0 per 32 (MXFP4);
    * a bitsandbytes 4-bit ``*.weight`` (a flat U8 column) beside its
      ``*.weight.quant_state.bitsandbytes__nf4`` (or ``__fp4``): labelled NF4 / FP4.
    """

    def __init__(self) -> None:
        self.candidates: dict[str, TensorInfo] = {}
        self.scales: dict[str, TensorInfo] = {}
        self.bnb: dict[str, str] = {}

    def see(self, tensor: TensorInfo) -> None:
        if tensor.dtype == "U8" and tensor.name.endswith((".weight", ".weight_packed")):
            self.candidates[tensor.name.rsplit(".", 1)[0]] = tensor
        elif tensor.dtype in FP4_BLOCKS and tensor.name.endswith(".weight_scale"):
            self.scales[tensor.name.removesuffix(".weight_scale")] = tensor
        elif ".weight.quant_state.bitsandbytes__" in tensor.name:
            weight, kind = tensor.name.split(".quant_state.bitsandbytes__", 1)
            self.bnb[weight] = kind.upper()

    def labels(self) -> dict[str, str]:
        labels: dict[str, str] = {}
        for prefix, weight in self.candidates.items():
            if weight.name in self.bnb:
                labels[weight.name] = self.bnb[weight.name]
                continue
            scale = self.scales.get(prefix)
            if scale is None or len(scale.shape) != 2 or len(weight.shape) != 2:
                continue
            block, label = FP4_BLOCKS[scale.dtype]
            if scale.shape[0] == weight.shape[0] and scale.shape[1] * block == 2 * weight.shape[1]:
                labels[weight.name] = label
        return labels


def is_aux_tensor(name: str) -> bool:
    """Whether ``name`` is a quantization side tensor (scale, zero point, index, state)."""
    return name.endswith(AUX_SUFFIXES) or ".quant_state." in name


def packing_factor(name: str, dtype: str, bits: int | None) -> Fraction:
    """Logical parameters held by one stored element of tensor ``name`` (32/3 for 3-bit
    GPTQ, whose values straddle the int32 words)."""
    if _MXFP4_BLOCKS.search(name) and dtype == "U8":
        return Fraction(2)
    if _PACKED_INT.search(name) and dtype in ("I32", "U32", "I8", "U8"):
        width = int(DTYPE_BYTES[dtype] * 8)
        return max(Fraction(width, bits or 4), Fraction(1))
    return Fraction(1)


def logical_elements(name: str, dtype: str, bits: int | None, elements: int) -> int:
    """Logical parameters held by ``elements`` stored elements of tensor ``name``."""
    return int(elements * packing_factor(name, dtype, bits))


def logical_dtype(name: str, dtype: str, bits: int | None) -> str:
    """The dtype label a packed tensor's parameters are reported under."""
    if _MXFP4_BLOCKS.search(name) and dtype == "U8":
        return "MXFP4"
    if packing_factor(name, dtype, bits) > 1:
        return f"INT{bits or 4}"
    return dtype


def config_dtype(config: Mapping[str, Any] | None) -> str | None:
    """The safetensors name of the dtype config.json declares (``torch_dtype``/``dtype``)."""
    if not isinstance(config, Mapping):
        return None
    for source in (config, config.get("text_config")):
        if not isinstance(source, Mapping):
            continue
        value = source.get("torch_dtype") or source.get("dtype")
        if isinstance(value, str):
            return CONFIG_DTYPES.get(value.lower().removeprefix("torch."), value.upper())
    return None
