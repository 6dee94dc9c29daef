"""Weight indexes as MEM007 / MEM008 evidence: ``model.safetensors.index.json`` and
``pytorch_model.bin.index.json`` (JSON alike), and the .bin index's total_size against the
sizes of the shards it lists (the .bin shards are pickles: never opened, only sized)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cardaudit.extract.parameters import index_total_size, index_weight_map
from cardaudit.model import Evidence, Hit, Location
from cardaudit.rules import Rule

SAFETENSORS_INDEX = "model.safetensors.index.json"
BIN_INDEX = "pytorch_model.bin.index.json"


def weight_indexes(evidence: Evidence) -> list[tuple[str, Mapping[str, Any]]]:
    """The weight indexes the repo ships: (file name, parsed JSON), safetensors first."""
    found = [(SAFETENSORS_INDEX, evidence.safetensors_index), (BIN_INDEX, evidence.bin_index)]
    return [(name, index) for name, index in found if isinstance(index, Mapping)]


def bin_index_hits(evidence: Evidence, index: Mapping[str, Any], rule: Rule) -> list[Hit] | str:
    """total_size against the sizes of the .bin shards it lists, or why it cannot be.

    A .bin shard (a torch zip of one pickle and one record per tensor storage) holds every
    byte of its tensors plus the pickle and the zip records: the shards together can never
    be smaller than total_size, and exceed it only by that overhead (bounded generously per
    tensor and per shard by the rule's params). The shards are sized from the listing, never
    opened."""
    total_size = index_total_size(index)
    weight_map = index_weight_map(index)
    if total_size is None or not weight_map:
        return "the .bin index has no total_size or no weight_map"
    sizes = {entry.path: entry.size for entry in evidence.repo.files}
    shards = sorted(set(weight_map.values()))
    present = [shard for shard in shards if shard in sizes]
    if not present:
        return "no .bin shard is present: an index-only copy of the repo"
    if len(present) < len(shards):
        return "some shards are missing (MEM008)"
    stored = sum(sizes[shard] for shard in shards)
    overhead = int(rule.param("bin_overhead_per_tensor", 4096)) * len(weight_map) + int(
        rule.param("bin_overhead_per_shard", 65536)
    ) * len(shards)
    where = Location(BIN_INDEX, _line(evidence))
    listing = f"the {len(shards)} .bin shard(s) it lists are {stored:,} bytes in all"
    if stored < total_size:
        return [
            Hit(
                f"{BIN_INDEX} says total_size {total_size:,} bytes ({_size(total_size)}); "
                f"{listing}, {total_size - stored:,} bytes fewer than the tensors alone "
                "(a stale index or truncated shards)",
                where,
                f"total_size: {total_size}",
            )
        ]
    if stored > total_size + overhead:
        return [
            Hit(
                f"{BIN_INDEX} says total_size {total_size:,} bytes ({_size(total_size)}); "
                f"{listing}, {stored - total_size:,} bytes more, beyond what the pickles and "
                f"zip records of {len(weight_map):,} tensors take (at most {overhead:,}): "
                "a stale index or shards in another precision",
                where,
                f"total_size: {total_size}",
            )
        ]
    return []


def _line(evidence: Evidence) -> int | None:
    text = evidence.repo.text(BIN_INDEX)
    return text.find_text('"total_size"') if text else None


def _size(value: float) -> str:
    return f"{value / 1e6:,.3f} MB" if value < 1e8 else f"{value / 1e9:,.1f} GB"
