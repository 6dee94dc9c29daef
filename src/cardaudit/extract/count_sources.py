"""Parameter counts from evidence other than safetensors headers: the Hub's totals of those
headers, GGUF headers and config.json alone."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from math import prod
from typing import Any

from cardaudit.extract.config_count import ACTIVE_CONVENTION, ConfigCount, count_from_config
from cardaudit.extract.quantization import config_dtype, quantization_of
from cardaudit.model import GGUFHeader, ParameterFacts, SafetensorsTotals


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


def from_gguf(headers: Iterable[GGUFHeader], listed: Iterable[str] = ()) -> ParameterFacts | None:
    """Parameters of the main GGUF model (its split parts add up; other quantizations of it
    and projector files, ``listed`` or read, are named in ``details.other_gguf_files``)."""
    readable = [header for header in headers if not header.error and header.tensors]
    if not readable:
        return None
    # Split GGUF files (model-00001-of-00003.gguf) add up; separate quantizations do not.
    from cardaudit.extract.gguf_files import main_gguf_group

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


def config_details(count: ConfigCount) -> dict[str, Any]:
    return {
        "family": count.family,
        "components": dict(count.components),
        "mtp": count.components.get("mtp", 0),
        "vision": count.components.get("vision", 0),
        "total_with_mtp": count.total_with_mtp,
        "notes": list(count.notes),
        "active_convention": ACTIVE_CONVENTION,
    }


def from_config(config: Mapping[str, Any] | None) -> ParameterFacts | None:
    if not isinstance(config, Mapping):
        return None
    count = count_from_config(config)
    if count is None:
        return None
    dtype = config_dtype(config)
    quantized = quantization_of(config).method is not None
    by_dtype = {dtype: count.total} if dtype and not quantized else {}
    return ParameterFacts(count.total, count.active, by_dtype, "config", config_details(count))
