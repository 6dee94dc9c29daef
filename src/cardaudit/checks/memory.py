"""MEM rules on stated figures: parameters, memory, GPUs, precision and context against the
computed ones (the weight files' own consistency is checks/memory_files.py)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from itertools import groupby
from typing import Any

from cardaudit.checks.registry import NotApplicable, check
from cardaudit.checks.repeats import also_stated
from cardaudit.extract.config_count import text_config
from cardaudit.extract.quantization import DTYPE_BYTES, config_dtype
from cardaudit.model import Evidence, Facts, Hit, Location
from cardaudit.rules import Rule


def _figures(facts: Facts, kind: str) -> list[Mapping[str, Any]]:
    """Stated figures of ``kind`` that are about this model (not a code README's family)."""
    return [
        f
        for f in facts.extra.get("figures", ())
        if f.get("kind") == kind and f.get("about_model", True)
    ]


def _location(figure: Mapping[str, Any]) -> Location:
    return Location(figure["path"], figure["line"], repo=figure.get("repo", "model"))


def _by_line(figures: list[Mapping[str, Any]]) -> Iterator[list[Mapping[str, Any]]]:
    """Figures grouped by the line they sit on (a line listing several models counts once)."""
    key = lambda f: (f.get("repo", "model"), f["path"], f["line"])  # noqa: E731
    for _key, group in groupby(sorted(figures, key=key), key=key):
        yield list(group)


def _one_per_value(
    groups: list[list[Mapping[str, Any]]],
) -> Iterator[tuple[Mapping[str, Any], tuple[Location, ...]]]:
    """(first figure, the other places) per stated value: the same wrong figure in the
    prose and in a table is one fact, so one finding with both places."""
    by_value: dict[float, list[Mapping[str, Any]]] = {}
    for group in groups:
        by_value.setdefault(group[0]["value"], []).append(group[0])
    for same in by_value.values():
        yield same[0], tuple(_location(figure) for figure in same[1:])


def _billions(value: float) -> str:
    return f"{value / 1e9:,.2f}B" if value >= 1e9 else f"{value / 1e6:,.1f}M"


def gigabytes(value: float) -> str:
    """A byte count as "12.3 GB = 11.5 GiB" (or MB below 0.1 GB)."""
    if value < 1e8:
        return f"{value / 1e6:,.3f} MB"
    return f"{value / 1e9:,.1f} GB = {value / 2**30:,.1f} GiB"


def _close(claim: Mapping[str, Any], actual: float, rule: Rule) -> bool:
    tolerance = rule.param("approx_tolerance" if claim.get("approx") else "tolerance", 0.05)
    slack = max(tolerance * claim["value"], claim.get("precision", 0.0))
    return abs(actual - claim["value"]) <= slack


# --------------------------------------------------------------------------- claims


@check("MEM001")
def total_parameters_claim(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    params = facts.parameters
    claims = _figures(facts, "parameters_total")
    if params.total is None or not claims:
        raise NotApplicable("no parameter count or no stated total")
    details = params.details
    config = details.get("config", {}) if params.source != "config" else details
    candidates = {
        "total": params.total,
        "language model": details.get("language_model"),
        "with MTP layers": config.get("total_with_mtp"),
        "without vision tower": params.total - (details.get("vision") or 0),
    }
    candidates = {k: v for k, v in candidates.items() if v}
    wrong = [
        group
        for group in _by_line(claims)
        if not any(_close(c, v, rule) for c in group for v in candidates.values())
    ]
    for claim, also in _one_per_value(wrong):
        yield Hit(
            f"card says {claim['text']!r} ({_billions(claim['value'])}); the weights hold "
            f"{params.total:,} parameters = {_billions(params.total)} "
            f"(from {params.source}; {_ratio(claim['value'], params.total)})"
            + also_stated(_location(claim), also),
            _location(claim),
            claim["text"],
            also=also,
        )


@check("MEM002")
def active_parameters_claim(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    params = facts.parameters
    claims = _figures(facts, "parameters_active")
    if params.active is None or not claims:
        raise NotApplicable("not an MoE model with a computed active count, or no stated count")
    candidates = [params.active]
    without = params.details.get("active_without_embeddings")
    config = evidence.config if isinstance(evidence.config, Mapping) else {}
    cfg = text_config(config)
    vocab, hidden = cfg.get("vocab_size"), cfg.get("hidden_size")
    if isinstance(vocab, int) and isinstance(hidden, int):
        candidates += [params.active - vocab * hidden, params.active - 2 * vocab * hidden]
    if without:
        candidates.append(without)
    for group in _by_line(claims):
        if any(_close(c, v, rule) for c in group for v in candidates if v > 0):
            continue
        claim = group[0]
        yield Hit(
            f"card says {claim['text']!r} ({_billions(claim['value'])} active per token); "
            f"computed {params.active:,} = {_billions(params.active)} with embeddings "
            f"({_billions(candidates[-1])} without): "
            f"{_ratio(claim['value'], params.active)}",
            _location(claim),
            claim["text"],
        )


def _ratio(claimed: float, actual: float) -> str:
    return f"the stated figure is {claimed / actual:.0%} of the computed one"


def _weights_in(facts: Facts, dtype: str | None) -> tuple[float, str]:
    """Weight bytes in ``dtype`` (a what-if) or as stored, with a label."""
    memory = facts.memory
    what_if = memory.details.get("what_if", {})
    key = {"BF16": "BF16", "F16": "BF16", "F8_E4M3": "FP8", "INT8": "FP8", "INT4": "INT4"}.get(
        dtype or ""
    )
    stored_dtype = _main_dtype(facts)
    if key and key in what_if and not (stored_dtype and _same_width(stored_dtype, dtype)):
        return what_if[key]["bytes"], f"in {dtype}"
    return float(memory.weight_bytes or 0), f"as stored ({stored_dtype or 'unknown dtype'})"


def _same_width(stored: str, claimed: str | None) -> bool:
    widths = {"BF16": 2, "F16": 2, "F32": 4, "F8_E4M3": 1, "INT8": 1, "I8": 1}
    widths |= dict.fromkeys(("INT4", "MXFP4", "NVFP4", "NF4", "FP4"), 0.5)
    return claimed is not None and widths.get(stored) == widths.get(claimed)


def _main_dtype(facts: Facts) -> str | None:
    by_dtype = facts.parameters.by_dtype
    if by_dtype:
        return max(by_dtype.items(), key=lambda item: item[1])[0]
    return None


@check("MEM003")
def memory_claim(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    claims = [
        c for c in _figures(facts, "memory") if c.get("cells", 0) <= rule.param("max_cells", 3)
    ]
    if not facts.memory.weight_bytes or not claims:
        raise NotApplicable("no weight size or no stated memory figure")
    for group in _by_line(claims):
        claim = group[0]
        weights, label = _weights_in(facts, claim.get("dtype"))
        if any(_memory_ok(c, weights, rule) for c in group):
            continue
        message = (
            f"card says {claim['text']}; the weights {label} are {gigabytes(weights)}"
            f" ({_ratio(claim['value'], weights)})"
        )
        explanation = _explain(claim, weights, facts, rule)
        yield Hit(f"{message}{explanation}", _location(claim), claim["text"])


def _memory_ok(claim: Mapping[str, Any], weights: float, rule: Rule) -> bool:
    """A stated size may be the weights (within tolerance) or a larger requirement
    (weights + KV cache, optimizer states, a node's memory): only a smaller one is wrong."""
    return _close(claim, weights, rule) or claim["value"] >= weights


def _explain(claim: Mapping[str, Any], weights: float, facts: Facts, rule: Rule) -> str:
    unit = str(claim.get("unit") or "").lower()
    if unit.startswith("g") and unit != "gib":
        as_gib = {**claim, "value": claim["value"] / 1e9 * 2**30}
        if _close(as_gib, weights, rule):
            return f": the card's GB are GiB ({weights / 2**30:,.1f} GiB)"
    for name, what_if in facts.memory.details.get("what_if", {}).items():
        if _close(claim, what_if["bytes"], rule):
            return f": the figure matches the weights in {name} ({gigabytes(what_if['bytes'])})"
    return ""


@check("MEM004")
def gpu_claim(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    claims = _figures(facts, "gpu")
    if not facts.memory.weight_bytes or not claims:
        raise NotApplicable("no weight size or no GPU named")
    usable = rule.param("usable_fraction", 1.0)
    for group in _by_line(claims):
        claim = group[0]
        weights, label = _weights_in(facts, claim.get("dtype"))
        if any(weights <= c["value"] * 2**30 * usable for c in group):
            continue
        capacity = claim["value"] * 2**30
        fits = [
            name
            for name, what_if in facts.memory.details.get("what_if", {}).items()
            if what_if["bytes"] <= capacity * usable
        ]
        hint = f"; they would fit in {', '.join(fits)}" if fits else "; no precision fits"
        yield Hit(
            f"card says the model runs on {claim['text']} ({claim['count']} × "
            f"{claim['gpu']}, {capacity / 2**30:,.0f} GiB); the weights {label} alone are "
            f"{gigabytes(weights)}, before any KV cache{hint}",
            _location(claim),
            claim["text"],
        )


@check("MEM005")
def context_claim(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    claims = [c for c in _figures(facts, "context")]
    context = facts.memory.details.get("context") or {}
    limit = context.get("effective")
    if not limit or not claims:
        raise NotApplicable("no context length in config.json or no stated context")
    max_pos = context.get("max_position_embeddings")
    field = context.get("field") or "max_position_embeddings"
    allowed = limit * (1 + rule.param("tolerance", 0.0))
    wrong = [group for group in _by_line(claims) if not any(c["value"] <= allowed for c in group)]
    for claim, also in _one_per_value(wrong):
        scaling = context.get("rope_scaling")
        how = (
            f"{field} {max_pos:,} and rope scaling {dict(scaling)} allow {limit:,}"
            if scaling
            else f"{field} is {max_pos:,} and no rope scaling is configured"
        )
        yield Hit(
            f"card states a context of {int(claim['value']):,} tokens ({claim['text']!r}); "
            f"config.json {how}" + also_stated(_location(claim), also),
            _location(claim),
            claim["text"],
            also=also,
        )


@check("MEM006")
def dtype_consistency(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    stored = _main_dtype(facts)
    source = facts.parameters.source
    inferred = source == "index" and "dtype_inferred" in facts.parameters.details
    if not stored or not (source in ("safetensors", "hub", "gguf") or inferred):
        raise NotApplicable("no weight headers or index to read the stored dtype from")
    declared = config_dtype(evidence.config)
    quantized = isinstance(evidence.config, Mapping) and "quantization_config" in evidence.config
    if declared and declared != stored and not quantized and declared in DTYPE_BYTES:
        yield Hit(
            f"config.json declares {declared} but {facts.parameters.by_dtype[stored]:,} of "
            f"{facts.parameters.total:,} stored parameters are {stored}"
            + (" (inferred from the index's total_size)" if inferred else ""),
            Location("config.json", _config_line(evidence, ("torch_dtype", "dtype"))),
            f"dtype {declared} vs stored {stored}",
        )
    for group in _by_line(_figures(facts, "dtype")):
        stated = {c["dtype"] for c in group}
        if stored in stated or _same_width_any(stored, stated) or quantized:
            continue
        claim = group[0]
        yield Hit(
            f"card states precision {', '.join(sorted(stated))} but the weights are stored "
            f"as {stored}",
            _location(claim),
            claim["text"],
        )


def _same_width_any(stored: str, stated: set[str]) -> bool:
    return any(_same_width(stored, dtype) and stored[0] == dtype[0] for dtype in stated)


def _config_line(evidence: Evidence, keys: tuple[str, ...]) -> int | None:
    text = evidence.repo.text("config.json")
    if text is None:
        return None
    for key in keys:
        line = text.find_line(rf'"{key}"\s*:')
        if line:
            return line
    return None
