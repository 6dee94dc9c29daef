"""Parameter counts, from the best evidence available.

Order of preference: safetensors headers (exact), the Hub's totals of those headers when
they were too large to read (exact, checked against the commit), GGUF headers (exact), the
safetensors index (``total_size`` / ``weight_map``) with config.json, config.json alone.
``total`` is every logical parameter stored (packed int4 / MXFP4 unpacked; quantization scales, zero
points and indices excluded — they are storage, counted in ``details.aux_bytes``). For a
config-only count, ``total`` is what transformers builds; MTP layers are in
``details.mtp``. See :data:`cardaudit.extract.config_count.ACTIVE_CONVENTION` for ``active``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from math import prod
from typing import Any

from cardaudit.extract.config_count import (
    ACTIVE_CONVENTION,
    ConfigCount,
    count_from_config,
    moe_shape,
    text_config,
)
from cardaudit.extract.quantization import (
    DTYPE_BYTES,
    UNPACKED_DTYPES,
    config_dtype,
    fp4_labels,
    is_aux_tensor,
    logical_dtype,
    logical_elements,
    quantization_of,
)
from cardaudit.model import (
    Evidence,
    GGUFHeader,
    ParameterFacts,
    SafetensorsHeader,
    SafetensorsTotals,
    TensorInfo,
)

VISION_MARKERS = (
    "visual.",
    "vision_tower",
    "vision_model",
    "vision_encoder",
    "multi_modal_projector",
    "embed_vision",
    "audio_tower",
    "audio_model",
    "embed_audio",
    "mm_projector",
)


def _layer_index(name: str) -> int | None:
    """N in ``...layers.N....`` (string operations: this runs once per tensor)."""
    at = name.find("layers.")
    if at == -1 or (at and name[at - 1] != "."):
        return None
    digits = name[at + 7 : name.find(".", at + 7)]
    return int(digits) if digits.isdigit() else None


def tensor_part(name: str, num_layers: int | None) -> str:
    """Which part of the model a tensor belongs to: vision, mtp, expert or core."""
    lowered = name.lower()
    if (
        "vis" in lowered or "audio" in lowered or "multi_modal" in lowered or "mm_" in lowered
    ) and any(marker in lowered for marker in VISION_MARKERS):
        return "vision"
    if lowered.startswith(("mtp.", "model.mtp.", "mtp_")) or ".mtp." in lowered:
        return "mtp"
    if num_layers is not None:
        layer = _layer_index(name)
        if layer is not None and layer >= num_layers:
            return "mtp"
    if (".experts." in name or "_exps." in name) and "shared_expert" not in lowered:
        return "expert"
    return "core"


def _num_layers(config: Mapping[str, Any] | None) -> int | None:
    if not isinstance(config, Mapping):
        return None
    value = text_config(config).get("num_hidden_layers")
    return int(value) if isinstance(value, int) else None


def _moe_ratio(config: Mapping[str, Any] | None) -> tuple[int, int] | None:
    if not isinstance(config, Mapping):
        return None
    moe = moe_shape(text_config(config))
    return (moe.top_k, moe.experts) if moe else None


def count_tensors(
    tensors: Iterable[TensorInfo], config: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Exact logical counts of safetensors tensors, split by dtype and model part."""
    tensors = list(tensors)
    fp4 = fp4_labels(tensors)
    quant = quantization_of(config)
    num_layers = _num_layers(config)
    by_dtype: Counter[str] = Counter()
    parts: Counter[str] = Counter()
    stored_bytes = 0.0
    aux_bytes = 0.0
    aux_tensors = 0
    seen: set[str] = set()
    duplicates = 0
    opaque: list[str] = []
    for tensor in tensors:
        if tensor.name in seen:
            duplicates += 1
            continue
        seen.add(tensor.name)
        elements = prod(tensor.shape)
        size = elements * DTYPE_BYTES.get(tensor.dtype, 0)
        stored_bytes += size
        if is_aux_tensor(tensor.name):
            aux_bytes += size
            aux_tensors += 1
            continue
        if tensor.dtype in UNPACKED_DTYPES:  # fast path: floats are never packed
            logical, label = elements, tensor.dtype
        elif tensor.name in fp4:
            logical, label = 2 * elements, fp4[tensor.name]
        else:
            logical = logical_elements(tensor.name, tensor.dtype, quant.bits, elements)
            label = logical_dtype(tensor.name, tensor.dtype, quant.bits)
            if label in OPAQUE_DTYPES and elements >= OPAQUE_MIN_ELEMENTS:
                opaque.append(tensor.name)
        by_dtype[label] += logical
        parts[tensor_part(tensor.name, num_layers)] += logical
    total = sum(by_dtype.values())
    return {
        "total": total,
        "by_dtype": dict(sorted(by_dtype.items())),
        "parts": dict(parts),
        "stored_bytes": int(stored_bytes),
        "aux_bytes": int(aux_bytes),
        "aux_tensors": aux_tensors,
        "tensors": len(seen),
        "duplicate_tensors": duplicates,
        "opaque_tensors": opaque,
    }


def active_from_parts(parts: Mapping[str, int], ratio: tuple[int, int] | None) -> int | None:
    """Active parameters per token from part totals and the top_k / n_experts ratio."""
    experts = parts.get("expert", 0)
    if not experts:
        return None
    if ratio is None:
        return None
    top_k, n_experts = ratio
    return parts.get("core", 0) + (experts * top_k) // n_experts


def _without_embeddings(active: int | None, config: Mapping[str, Any] | None) -> int | None:
    if active is None or not isinstance(config, Mapping):
        return None
    cfg = text_config(config)
    vocab, hidden = cfg.get("vocab_size"), cfg.get("hidden_size")
    if not isinstance(vocab, int) or not isinstance(hidden, int):
        return None
    tied = cfg.get("tie_word_embeddings", False)
    return active - vocab * hidden * (1 if tied else 2)


#: Integer storage left packed after unpacking what is known (GPTQ / AWQ / compressed-tensors
#: int, FP4, bitsandbytes): EXL2 ``q_weight``, EXL3 ``trellis``, HQQ and the like. Their
#: elements are not parameters, and their logical shapes are not in the header.
OPAQUE_DTYPES = frozenset({"I16", "I32", "U16", "U32"})
OPAQUE_MIN_ELEMENTS = 4096


def from_headers(
    headers: Iterable[SafetensorsHeader], config: Mapping[str, Any] | None
) -> ParameterFacts | None:
    readable = [header for header in headers if not header.error]
    if not readable:
        return None
    counted = count_tensors((t for h in readable for t in h.tensors), config)
    if not counted["tensors"]:
        return None
    parts = counted.pop("parts")
    opaque = counted.pop("opaque_tensors")
    if opaque:
        quant = quantization_of(config).label or "a quantization cardaudit cannot unpack"
        return ParameterFacts(
            details={
                "headers_not_counted": (
                    f"{len(opaque)} tensors hold packed integer storage ({quant}; e.g. "
                    f"{opaque[0]}) whose logical shapes the headers do not give"
                )
            }
        )
    active = active_from_parts(parts, _moe_ratio(config))
    details = {
        **{k: v for k, v in counted.items() if k not in ("total", "by_dtype")},
        "shards": len(readable),
        "header_only_shards": [h.path for h in readable if _header_only(h)],
        "vision": parts.get("vision", 0),
        "mtp": parts.get("mtp", 0),
        "experts": parts.get("expert", 0),
        "language_model": counted["total"] - parts.get("vision", 0) - parts.get("mtp", 0),
        "active_convention": ACTIVE_CONVENTION,
        "active_without_embeddings": _without_embeddings(active, config),
    }
    return ParameterFacts(counted["total"], active, counted["by_dtype"], "safetensors", details)


def from_hub_totals(
    totals: SafetensorsTotals | None, config: Mapping[str, Any] | None
) -> ParameterFacts | None:
    """Exact totals the Hub computed from every shard header (see :class:`SafetensorsTotals`:
    bound to the audited commit by the shards' sizes, plain dtypes only). The Hub gives no
    split by model part, so ``active`` comes from config.json (``details.active_source``)."""
    if totals is None or not totals.total:
        return None
    if totals.method == "verified":
        return _from_verified_totals(totals, config)
    details = {
        "method": (
            "parameter totals the Hub computed from every shard header (model_info "
            "safetensors); checked against this commit: the listed shard sizes minus their "
            "headers equal the parameters times their dtype widths"
        ),
        "headers_read": 0,
        "shards": len(totals.files),
        "header_bytes": totals.header_bytes,
        "stored_bytes": totals.data_bytes,
        "why": "headers too large to read within the transfer budget (one tensor per expert)",
        "active_convention": ACTIVE_CONVENTION,
    }
    return ParameterFacts(totals.total, None, dict(totals.parameters), "hub", details)


def _from_verified_totals(
    totals: SafetensorsTotals, config: Mapping[str, Any] | None
) -> ParameterFacts | None:
    """The config count of a quantized repo, proven exact by the Hub's per-dtype totals
    (:func:`cardaudit.extract.quant_totals.verify_quantized`)."""
    from cardaudit.extract.quant_totals import METHOD, verify_quantized

    verified = verify_quantized(config, totals.parameters)
    if verified is None:
        return None
    details = {
        "method": METHOD,
        "scheme": verified.scheme,
        "verification": verified.verification,
        "quantized_families": list(verified.quantized_families),
        "headers_read": 0,
        "shards": len(totals.files),
        "header_bytes": totals.header_bytes,
        "stored_bytes": totals.data_bytes,
        "hub_totals": dict(totals.parameters),
        "quantized_weights": verified.quantized,
        "scale_elements": verified.scales,
        "stored_buffers": verified.buffers,
        "aux_bytes": verified.aux_bytes,
        "mtp": verified.mtp,
        "experts": verified.experts,
        "language_model": verified.total - verified.mtp,
        "why": "headers too large to read within the transfer budget (one tensor per expert)",
        "active_convention": ACTIVE_CONVENTION,
    }
    return ParameterFacts(verified.total, None, dict(verified.by_dtype), "hub", details)


def _header_only(header: SafetensorsHeader) -> bool:
    """A file holding its header and no tensor data (a stub; see rule MEM009)."""
    if header.header_length is None or header.size is None:
        return False
    has_data = any(prod(t.shape) for t in header.tensors)
    return has_data and header.size == 8 + header.header_length


def from_gguf(headers: Iterable[GGUFHeader], listed: Iterable[str] = ()) -> ParameterFacts | None:
    """Parameters of the main GGUF model (its split parts add up; other quantizations of it
    and projector files, ``listed`` or read, are named in ``details.other_gguf_files``)."""
    readable = [header for header in headers if not header.error and header.tensors]
    if not readable:
        return None
    # Split GGUF files (model-00001-of-00003.gguf) add up; separate quantizations do not.
    from cardaudit.sources.gguf_header import main_gguf_group

    chosen = set(main_gguf_group(h.path for h in readable))
    group = [h for h in readable if h.path in chosen]
    main = group[0]
    by_dtype: Counter[str] = Counter()
    experts = total = 0
    for header in group:
        for tensor in header.tensors:
            elements = prod(tensor.shape)
            by_dtype[tensor.dtype] += elements
            total += elements
            if "_exps." in tensor.name:
                experts += elements
    arch = str(main.metadata.get("general.architecture") or "")
    n_experts = main.metadata.get(f"{arch}.expert_count")
    top_k = main.metadata.get(f"{arch}.expert_used_count")
    active = None
    if experts and isinstance(n_experts, int) and isinstance(top_k, int) and n_experts:
        active = total - experts + experts * top_k // n_experts
    details = {
        "file": main.path,
        "files": [h.path for h in group],
        "other_gguf_files": sorted(
            {h.path for h in readable if h not in group}
            | {p for p in listed if p.lower().endswith(".gguf") and p not in chosen}
        ),
        "architecture": arch or None,
        "stored_bytes": sum(h.tensor_bytes for h in group),
        "experts": experts,
        "active_convention": ACTIVE_CONVENTION,
    }
    return ParameterFacts(total, active, dict(sorted(by_dtype.items())), "gguf", details)


def _config_details(count: ConfigCount) -> dict[str, Any]:
    return {
        "family": count.family,
        "components": dict(count.components),
        "mtp": count.components.get("mtp", 0),
        "vision": count.components.get("vision", 0),
        "total_with_mtp": count.total_with_mtp,
        "notes": list(count.notes),
        "active_convention": ACTIVE_CONVENTION,
    }


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
    index: Mapping[str, Any] | None, config: Mapping[str, Any] | None
) -> ParameterFacts | None:
    """Counts from the safetensors index: ``total_size`` over the bytes per parameter."""
    total_size = index_total_size(index)
    if total_size is None:
        return None
    weight_map = index_weight_map(index)
    count = count_from_config(config) if isinstance(config, Mapping) else None
    dtype = config_dtype(config) or "BF16"
    quant = quantization_of(config)
    num_layers = _num_layers(config)
    parts = Counter(tensor_part(name, num_layers) for name in weight_map)
    details: dict[str, Any] = {
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
        details["config"] = _config_details(count)
    if quant.method is None and count is not None:
        inferred = _infer_dtype(total_size, count, details["has_mtp_tensors"])
        if inferred is not None:
            details["dtype_inferred"] = inferred
            if inferred != dtype:
                details["config_dtype"] = dtype
            dtype = inferred
    if quant.method is None and dtype in DTYPE_BYTES:
        total = int(total_size / DTYPE_BYTES[dtype])
        details["method"] = f"total_size / {DTYPE_BYTES[dtype]:g} bytes per {dtype} parameter"
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


def _infer_dtype(total_size: int, count: ConfigCount, with_mtp: bool) -> str | None:
    """The dtype whose width turns total_size into the config count (within 1%), if any."""
    expected = count.total_with_mtp if with_mtp else count.total
    if not expected:
        return None
    for name, width in _WIDTHS.items():
        if abs(total_size / width - expected) <= 0.01 * expected:
            return name
    return None


def from_config(config: Mapping[str, Any] | None) -> ParameterFacts | None:
    if not isinstance(config, Mapping):
        return None
    count = count_from_config(config)
    if count is None:
        return None
    dtype = config_dtype(config)
    quantized = quantization_of(config).method is not None
    by_dtype = {dtype: count.total} if dtype and not quantized else {}
    return ParameterFacts(count.total, count.active, by_dtype, "config", _config_details(count))


def parameter_facts(evidence: Evidence) -> ParameterFacts:
    """The most exact parameter count the evidence allows (empty facts when none)."""
    config = evidence.config
    missing = _shards_without_headers(evidence)
    headers = () if missing else evidence.safetensors
    counted = from_headers(headers, config)
    skipped = counted.details.get("headers_not_counted") if counted is not None else None
    for facts in (
        None if skipped else counted,
        from_hub_totals(evidence.safetensors_totals, config),
        from_gguf(evidence.gguf, (entry.path for entry in evidence.repo.files)),
        from_index(evidence.safetensors_index, config),
        from_config(config),
    ):
        if facts is not None:
            if facts.source != "config" and isinstance(config, Mapping):
                count = count_from_config(config)
                if count is not None:
                    facts = _with_config_estimate(facts, count)
            extra = {"shards_without_headers": missing} if missing else {}
            if skipped:
                extra["headers_not_counted"] = skipped
            if extra:
                from dataclasses import replace

                facts = replace(facts, details={**facts.details, **extra})
            return facts
    return ParameterFacts(details={"headers_not_counted": skipped} if skipped else {})


def _shards_without_headers(evidence: Evidence) -> list[str]:
    """Shards the index lists whose header was not read (absent or unreadable)."""
    shards = set(index_weight_map(evidence.safetensors_index).values())
    if not shards or not evidence.safetensors:
        return []
    read = {h.path.rsplit("/", 1)[-1] for h in evidence.safetensors if not h.error}
    return sorted(s for s in shards if s.rsplit("/", 1)[-1] not in read)


def _with_config_estimate(facts: ParameterFacts, count: ConfigCount) -> ParameterFacts:
    from dataclasses import replace

    details = dict(facts.details)
    details.setdefault("config", _config_details(count))
    details["config_total"] = count.total
    if facts.active is None and count.active is not None and facts.source != "gguf":
        details["active_source"] = "config"
        return replace(facts, active=count.active, details=details)
    return replace(facts, details=details)
