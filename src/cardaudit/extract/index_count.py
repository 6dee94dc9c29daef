"""Parameter counts from a weight index (``model.safetensors.index.json`` or
``pytorch_model.bin.index.json``: JSON, read exactly alike): ``metadata.total_size`` over
the bytes per parameter, with config.json."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from cardaudit.extract.config_count import ACTIVE_CONVENTION, ConfigCount, count_from_config
from cardaudit.extract.count_sources import config_details
from cardaudit.extract.quantization import DTYPE_BYTES, config_dtype, quantization_of
from cardaudit.extract.tensor_parts import num_layers, tensor_part
from cardaudit.model import ParameterFacts


def index_total_size(index: Mapping[str, Any] | None) -> int | None:
    if not isinstance(index, Mapping):
        return None
    metadata = index.get("metadata")
    size = metadata.get("total_size") if isinstance(metadata, Mapping) else None
    if isinstance(size, bool) or not isinstance(size, int | float):
        return None
    return int(size) if 0 <= size < 2**63 else None  # also refuses inf and nan (1e999)


def index_weight_map(index: Mapping[str, Any] | None) -> Mapping[str, str]:
    if not isinstance(index, Mapping) or not isinstance(index.get("weight_map"), Mapping):
        return {}
    return {str(k): str(v) for k, v in index["weight_map"].items()}


def from_index(
    index: Mapping[str, Any] | None,
    config: Mapping[str, Any] | None,
    path: str = "model.safetensors.index.json",
) -> ParameterFacts | None:
    """Counts from a weight index at ``path``: ``total_size`` over the bytes per parameter
    (the dtype inferred from the config count, else the config's, else assumed BF16)."""
    total_size = index_total_size(index)
    if total_size is None:
        return None
    weight_map = index_weight_map(index)
    count = count_from_config(config) if isinstance(config, Mapping) else None
    declared = config_dtype(config)
    dtype = declared or "BF16"
    quant = quantization_of(config)
    layers = num_layers(config)
    parts = Counter(tensor_part(name, layers) for name in weight_map)
    details: dict[str, Any] = {
        "index": path,
        "index_total_size": total_size,
        "index_tensors": len(weight_map),
        "shards": len(set(weight_map.values())),
        "has_mtp_tensors": parts.get("mtp", 0) > 0,
        "has_vision_tensors": parts.get("vision", 0) > 0,
        "active_convention": ACTIVE_CONVENTION,
    }
    metadata = index.get("metadata") if isinstance(index, Mapping) else None
    if isinstance(metadata, Mapping) and isinstance(metadata.get("total_parameters"), int):
        details["index_total_parameters"] = metadata["total_parameters"]
    active = count.active if count else None
    if count is not None:
        details["config"] = config_details(count)
    duplicate = 0
    if quant.method is None and count is not None:
        twice = _tied_head_stored_twice(config, count, weight_map)
        inferred = _infer_dtype(total_size, count, details["has_mtp_tensors"], declared)
        if inferred is None and twice:
            inferred = _infer_dtype(total_size, count, details["has_mtp_tensors"], declared, twice)
            if inferred is not None:
                duplicate = twice
                details["tied_head_stored_twice"] = twice
        if inferred is not None:
            details["dtype_inferred"] = inferred
            if inferred != dtype:
                details["config_dtype"] = dtype
            dtype = inferred
    if quant.method is None and dtype in DTYPE_BYTES:
        total = int(total_size / DTYPE_BYTES[dtype]) - duplicate
        details["method"] = f"total_size / {DTYPE_BYTES[dtype]:g} bytes per {dtype} parameter"
        if declared is None and "dtype_inferred" not in details:
            details["dtype_assumed"] = (
                f"no dtype in config.json and no config count to infer it from: {dtype} assumed"
            )
        by_dtype = {dtype: total}
    elif count is not None:
        total = count.total_with_mtp if details["has_mtp_tensors"] else count.total
        details["method"] = f"config.json count ({quant.label or 'quantized'} storage)"
        by_dtype = {}
    else:
        return None
    return ParameterFacts(total, active, by_dtype, "index", details)


#: Storage dtypes tried when inferring what an index's total_size was written in.
_WIDTHS = {"F32": 4, "BF16": 2, "F8_E4M3": 1}


def _tied_head_stored_twice(
    config: Mapping[str, Any] | None, count: ConfigCount, weight_map: Mapping[str, str]
) -> int:
    """Elements of a tied LM head the index lists as a tensor of its own (older
    ``pytorch_model.bin`` checkpoints: their ``total_size`` counts the tied head and the
    embeddings apart); 0 when the head is untied or not listed."""
    if not isinstance(config, Mapping) or count.components.get("lm_head", 1):
        return 0
    if not any(name == "lm_head.weight" or name.endswith(".lm_head.weight") for name in weight_map):
        return 0
    untied = count_from_config({**config, "tie_word_embeddings": False})
    return untied.components.get("lm_head", 0) if untied is not None else 0


def _infer_dtype(
    total_size: int,
    count: ConfigCount,
    with_mtp: bool,
    declared: str | None = None,
    extra: int = 0,
) -> str | None:
    """The dtype whose width turns total_size into the config count (within 1%), if any;
    ``extra`` elements are stored beside the parameters (a tied head listed twice).

    The width is all total_size tells: when the config's own dtype has that width (F16 and
    BF16 are both 2 bytes) it is the one named, not another of the same width."""
    expected = (count.total_with_mtp if with_mtp else count.total) + extra
    if not expected:
        return None
    for name, width in _WIDTHS.items():
        if abs(total_size / width - expected) <= 0.01 * expected:
            return declared if declared and DTYPE_BYTES.get(declared) == width else name
    return None
