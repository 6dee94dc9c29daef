"""Rows of the text report's "Parameters and memory" table (plain strings, no rich)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cardaudit.model import Facts


def _size(value: float) -> str:
    return f"{value / 1e9:,.2f} GB = {value / 2**30:,.2f} GiB"


def _count(value: int) -> str:
    return f"{value:,} ({value / 1e9:,.2f}B)" if value >= 1e8 else f"{value:,}"


def kv_cache_text(kv: Mapping[str, Any]) -> str:
    """The KV cache per token as one figure whose parts are named, never an apparent sum:
    full-attention layers grow with the context, sliding-window layers stop at the window,
    linear-attention / Mamba layers hold a constant state."""
    dtype = kv.get("dtype") or "BF16"
    total, sliding = kv["bytes_per_token"], kv.get("sliding_bytes_per_token") or 0
    full = kv.get("full_attention_bytes_per_token", total - sliding)
    window = kv.get("sliding_window")
    how = f"{dtype} cache, {kv['attention']}"
    if sliding and window:
        if full:
            text = (
                f"{total:,} B per token up to {window:,} tokens, of which full-attention layers "
                f"{full:,} B (grow with the context) and sliding-window layers {sliding:,} B "
                f"(capped at {window:,} tokens); beyond the window {full:,} B per token"
            )
        else:
            text = (
                f"{total:,} B per token, all in sliding-window layers: capped at {window:,} tokens"
            )
    else:
        text = f"{total:,} B per token"
    if kv.get("constant_state_bytes"):
        text += (
            f"; plus a constant {kv['constant_state_bytes'] / 1e6:,.1f} MB of linear-attention"
            " / Mamba state per sequence"
        )
    return f"{text} ({how})"


def sizing_rows(facts: Facts) -> list[tuple[str, str]]:
    """(label, value) rows; empty when nothing about size is known."""
    params, memory = facts.parameters, facts.memory
    rows: list[tuple[str, str]] = []
    if params.total is not None:
        rows.append(("total parameters", f"{_count(params.total)} from {params.source}"))
        details = params.details
        if details.get("mtp"):
            rows.append(("  of which MTP layers", _count(details["mtp"])))
        if details.get("vision"):
            rows.append(("  of which vision tower", _count(details["vision"])))
        if params.active is not None:
            rows.append(("active per token", f"{_count(params.active)} (with embeddings)"))
        for dtype, count in params.by_dtype.items():
            rows.append((f"  stored as {dtype}", _count(count)))
        if details.get("header_only_shards"):
            rows.append(
                ("header-only shards", f"{len(details['header_only_shards'])} (no tensor data)")
            )
        if details.get("shards_without_headers"):
            rows.append(("shards not read", ", ".join(details["shards_without_headers"])))
    if params.details.get("config_not_counted"):
        rows.append(("config count", f"none: {params.details['config_not_counted']}"))
    if memory.weight_bytes is not None:
        weights = memory.details.get("weights", {})
        rows.append(("weights", f"{_size(memory.weight_bytes)} ({weights.get('from', '')})"))
        derived = weights.get("derived")
        if derived:
            rows.append(
                (
                    "  derived from config",
                    f"{_size(derived['bytes'])} ({derived['difference']:+.3%}; "
                    f"{derived['method']})",
                )
            )
    for name, what_if in memory.details.get("what_if", {}).items():
        rows.append((f"  in {name}", _size(what_if["bytes"])))
    kv = memory.details.get("kv_cache")
    if kv:
        rows.append(("KV cache per token", kv_cache_text(kv)))
        at = kv.get("at_context")
        if at:
            for key, value in at.items():
                if key.startswith("batch_"):
                    rows.append(
                        (f"  at {at['tokens']:,} tokens, batch {key[6:]}", _size(value["bytes"]))
                    )
    context = memory.details.get("context") or {}
    if context.get("max_position_embeddings"):
        field = context.get("field") or "max_position_embeddings"
        text = f"{field} {context['max_position_embeddings']:,}"
        if context.get("effective") != context.get("max_position_embeddings"):
            text += f", {context['effective']:,} with rope scaling"
        if context.get("stated"):
            text += f"; card states {context['stated']:,}"
        rows.append(("context", text))
    return rows
