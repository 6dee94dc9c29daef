"""MEM rules on the weight files: the index's total_size and weight map against the shard
headers, shards the index lists, shard series complete (split from checks/memory.py)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from cardaudit.checks.bin_index import (
    SAFETENSORS_INDEX,
    bin_index_hits,
    weight_indexes,
)
from cardaudit.checks.memory import gigabytes
from cardaudit.checks.registry import NotApplicable, check
from cardaudit.extract.header_walk import header_walk
from cardaudit.extract.parameters import index_total_size, index_weight_map
from cardaudit.model import Evidence, Facts, Hit, Location
from cardaudit.rules import Rule

# --------------------------------------------------------------------------- weight files


@check("MEM007")
def index_total_size_matches(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    reasons: list[str] = []
    checked = False
    for name, index in weight_indexes(evidence):
        check_index = _safetensors_index_hits if name == SAFETENSORS_INDEX else bin_index_hits
        outcome = check_index(evidence, index, rule)
        if isinstance(outcome, str):
            reasons.append(f"{name}: {outcome}" if len(weight_indexes(evidence)) > 1 else outcome)
            continue
        checked = True
        yield from outcome
    if not checked:
        raise NotApplicable("; ".join(reasons) or "no index total_size or no readable headers")


def _safetensors_index_hits(
    evidence: Evidence, index: Mapping[str, Any], rule: Rule
) -> list[Hit] | str:
    """total_size and weight_map against the shard headers, or why they cannot be."""
    total_size = index_total_size(index)
    headers = header_walk(evidence).shards  # the readable headers, walked once
    if total_size is None or not headers:
        return "no index total_size or no readable headers"
    weight_map = index_weight_map(index)
    shards = set(weight_map.values())
    covered = [h for h in headers if h.path.rsplit("/", 1)[-1] in shards or h.path in shards]
    if shards and {h.path.rsplit("/", 1)[-1] for h in covered} != {
        s.rsplit("/", 1)[-1] for s in shards
    }:
        return "some shards are missing (MEM008)"
    data = sum(h.data_bytes for h in covered or headers)
    hits = []
    tolerance = rule.param("tolerance_bytes", 0)
    if abs(data - total_size) > tolerance:
        hits.append(
            Hit(
                f"{SAFETENSORS_INDEX} says total_size {total_size:,} bytes; the shard "
                f"headers describe {int(data):,} bytes ({gigabytes(data)}); difference "
                f"{int(data - total_size):+,} bytes",
                Location(SAFETENSORS_INDEX, _index_line(evidence, SAFETENSORS_INDEX)),
                f"total_size: {total_size}",
            )
        )
    names = frozenset().union(*(h.names for h in covered))
    missing = sorted(set(weight_map) - names)
    if missing:
        hits.append(
            Hit(
                f"{len(missing)} tensor(s) listed in the index are in no shard header "
                f"(first: {missing[0]})",
                Location(SAFETENSORS_INDEX, _index_line(evidence, SAFETENSORS_INDEX, missing[0])),
                missing[0],
            )
        )
    return hits


def _index_line(evidence: Evidence, path: str, key: str = "total_size") -> int | None:
    text = evidence.repo.text(path)
    return text.find_text(f'"{key}"') if text else None


@check("MEM008")
def index_shards_present(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    indexes = [(name, index_weight_map(index)) for name, index in weight_indexes(evidence)]
    indexes = [(name, weight_map) for name, weight_map in indexes if weight_map]
    if not indexes:
        raise NotApplicable("no weight index (safetensors or .bin) with a weight_map")
    present = {entry.path for entry in evidence.repo.files}
    checked = False
    for name, weight_map in indexes:
        shards = sorted(set(weight_map.values()))
        missing = [shard for shard in shards if shard not in present]
        if len(missing) == len(shards):
            continue  # an index-only copy of the repo: nothing to say about its shards
        checked = True
        yield from _missing_shards(evidence, name, weight_map, shards, missing, rule)
    if not checked:
        raise NotApplicable("no shard is present: an index-only copy of the repo")


def _missing_shards(
    evidence: Evidence,
    name: str,
    weight_map: Mapping[str, str],
    shards: list[str],
    missing: list[str],
    rule: Rule,
) -> Iterator[Hit]:
    text = evidence.repo.text(name)
    limit = rule.param("max_listed", 5)
    if len(missing) > limit:
        yield Hit(
            f"{len(missing)} of {len(shards)} shards listed in {name} "
            f"are not in the repo (first: {missing[0]}): the model cannot be loaded",
            Location(name, text.find_text(f'"{missing[0]}"') if text else None),
            ", ".join(missing[:limit]) + ", …",
        )
        return
    for shard in missing:
        tensors = sum(1 for v in weight_map.values() if v == shard)
        line = text.find_text(f'"{shard}"') if text else None
        yield Hit(
            f"shard {shard} is listed in {name} ({tensors} tensors) but "
            "is not in the repo: the model cannot be loaded",
            Location(name, line),
            shard,
        )


@check("MEM009")
def shards_complete(evidence: Evidence, facts: Facts, rule: Rule) -> Iterator[Hit]:
    # what each header describes, from the repo's one walk of its tensors (extract/header_walk)
    headers = [h for h in header_walk(evidence).shards if h.header_length is not None]
    if not headers:
        raise NotApplicable("no readable safetensors headers")
    for header in headers:
        expected = 8 + header.header_length + int(header.data_bytes)
        size = header.size
        if size is None or size == expected:
            continue
        if size == 8 + header.header_length and rule.param("header_only_is_stub", True):
            continue  # a header-only stub: reported in facts.parameters.details
        what = "shorter" if size < expected else "longer"
        yield Hit(
            f"{header.path} is {size:,} bytes but its header describes {expected:,} "
            f"({what}: {'truncated download?' if size < expected else 'trailing data'})",
            Location(header.path),
            f"{size} != {expected}",
        )
