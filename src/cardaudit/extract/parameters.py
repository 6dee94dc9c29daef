"""Parameter counts, from the best evidence available.

Order of preference: safetensors headers (exact; walked once by :mod:`.header_walk`), the
Hub's totals of those headers when they were too large to read (exact, checked against the
commit), GGUF headers (exact), the weight index (``total_size`` / ``weight_map``) with config.json,
config.json alone (:mod:`cardaudit.extract.count_sources`, :mod:`.index_count`).
``total`` is every logical parameter stored (packed int4 / MXFP4 unpacked; quantization scales, zero
points and indices excluded — they are storage, counted in ``details.aux_bytes``). For a
config-only count, ``total`` is what transformers builds; MTP layers are in
``details.mtp``. See :data:`cardaudit.extract.config_count.ACTIVE_CONVENTION` for ``active``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from cardaudit.extract.config_count import (
    ACTIVE_CONVENTION,
    ConfigCount,
    count_from_config,
    text_config,
)
from cardaudit.extract.count_sources import config_details, from_config, from_gguf, from_hub_totals
from cardaudit.extract.header_walk import HeaderWalk, count_tensors, header_walk, walk_headers
from cardaudit.extract.index_count import from_index, index_total_size, index_weight_map
from cardaudit.extract.quantization import quantization_of
from cardaudit.extract.tensor_parts import moe_ratio, tensor_part
from cardaudit.model import Evidence, ParameterFacts, SafetensorsHeader

__all__ = [
    "count_tensors",
    "from_config",
    "from_gguf",
    "from_headers",
    "from_hub_totals",
    "from_index",
    "index_total_size",
    "index_weight_map",
    "parameter_facts",
    "tensor_part",
]


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


def from_headers(
    headers: Iterable[SafetensorsHeader], config: Mapping[str, Any] | None
) -> ParameterFacts | None:
    """The count of safetensors headers (one walk of their tensors, :mod:`.header_walk`)."""
    return _from_walk(walk_headers(headers, config), config)


def _from_walk(walk: HeaderWalk, config: Mapping[str, Any] | None) -> ParameterFacts | None:
    if not walk.shards:
        return None
    counted = dict(walk.counted)
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
    active = active_from_parts(parts, moe_ratio(config))
    details = {
        **{k: v for k, v in counted.items() if k not in ("total", "by_dtype")},
        "shards": len(walk.shards),
        "header_only_shards": [shard.path for shard in walk.shards if shard.header_only],
        "vision": parts.get("vision", 0),
        "mtp": parts.get("mtp", 0),
        "experts": parts.get("expert", 0),
        "language_model": counted["total"] - parts.get("vision", 0) - parts.get("mtp", 0),
        "active_convention": ACTIVE_CONVENTION,
        "active_without_embeddings": _without_embeddings(active, config),
    }
    return ParameterFacts(counted["total"], active, counted["by_dtype"], "safetensors", details)


def parameter_facts(evidence: Evidence) -> ParameterFacts:
    """The most exact parameter count the evidence allows (empty facts when none)."""
    config = evidence.config
    missing = _shards_without_headers(evidence)
    counted = None if missing else _from_walk(header_walk(evidence), config)
    skipped = counted.details.get("headers_not_counted") if counted is not None else None
    for facts in (
        None if skipped else counted,
        from_hub_totals(evidence.safetensors_totals, config),
        from_gguf(evidence.gguf, (entry.path for entry in evidence.repo.files)),
        _from_any_index(evidence, config),
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
            return _not_counted(facts, config)
    empty = ParameterFacts(details={"headers_not_counted": skipped} if skipped else {})
    return _not_counted(empty, config)


def _not_counted(facts: ParameterFacts, config: Any) -> ParameterFacts:
    """Say why config.json gave no count, when it is there and gave none."""
    from dataclasses import replace

    from cardaudit.extract.config_count import not_counted_reason

    if not isinstance(config, Mapping):
        return facts
    reason = not_counted_reason(config)
    if reason is None:
        return facts
    return replace(facts, details={**facts.details, "config_not_counted": reason})


def _from_any_index(evidence: Evidence, config: Any) -> ParameterFacts | None:
    """The safetensors index, else ``pytorch_model.bin.index.json`` (JSON evidence alike)."""
    found = from_index(evidence.safetensors_index, config)
    if found is None and evidence.bin_index is not None:
        found = from_index(evidence.bin_index, config, "pytorch_model.bin.index.json")
    return found


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
    details.setdefault("config", config_details(count))
    details["config_total"] = count.total
    if facts.active is None and count.active is not None and facts.source != "gguf":
        details["active_source"] = "config"
        return replace(facts, active=count.active, details=details)
    return replace(facts, details=details)
