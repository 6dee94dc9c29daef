"""Build safetensors repos without weights: real headers, then either no data (header-only
stubs) or a sparse data section of the right length (``truncate``), for tests, fixtures and
benchmarks."""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterable, Mapping
from math import prod
from pathlib import Path

DTYPE_BYTES = {"F32": 4, "BF16": 2, "F16": 2, "F8_E4M3": 1, "I32": 4, "U8": 1, "I8": 1, "I64": 8}

Tensors = Mapping[str, tuple[str, tuple[int, ...]]]


def header_bytes(tensors: Tensors) -> tuple[bytes, int]:
    """The encoded header (length prefix included) and the data size it describes."""
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        size = prod(shape) * DTYPE_BYTES[dtype]
        header[name] = {
            "dtype": dtype,
            "shape": list(shape),
            "data_offsets": [offset, offset + size],
        }
        offset += size
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw, offset


def write_shard(path: Path, tensors: Tensors, *, sparse: bool = False) -> int:
    """Write one shard; header-only unless ``sparse`` (then a sparse data section)."""
    head, data = header_bytes(tensors)
    with open(path, "wb") as stream:
        stream.write(head)
    if sparse:
        os.truncate(path, len(head) + data)
    return data


def split(tensors: Tensors, shard_bytes: int) -> list[dict[str, tuple[str, tuple[int, ...]]]]:
    """Group tensors, in order, into shards of at most ``shard_bytes`` (one tensor minimum)."""
    shards: list[dict[str, tuple[str, tuple[int, ...]]]] = [{}]
    used = 0
    for name, (dtype, shape) in tensors.items():
        size = prod(shape) * DTYPE_BYTES[dtype]
        if shards[-1] and used + size > shard_bytes:
            shards.append({})
            used = 0
        shards[-1][name] = (dtype, shape)
        used += size
    return shards


def write_repo(
    root: Path,
    tensors: Tensors,
    *,
    shard_bytes: int = 5 * 10**9,
    sparse: bool = False,
    prefix: str = "model",
) -> dict[str, object]:
    """Write sharded safetensors (and the index when more than one shard); return the index."""
    root.mkdir(parents=True, exist_ok=True)
    groups = split(tensors, shard_bytes)
    weight_map: dict[str, str] = {}
    total = 0
    for number, group in enumerate(groups, start=1):
        name = (
            f"{prefix}.safetensors"
            if len(groups) == 1
            else f"{prefix}-{number:05d}-of-{len(groups):05d}.safetensors"
        )
        total += write_shard(root / name, group, sparse=sparse)
        weight_map.update(dict.fromkeys(group, name))
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    if len(groups) > 1:
        (root / f"{prefix}.safetensors.index.json").write_text(json.dumps(index, indent=2) + "\n")
    return index


def tensors_of(names_and_shapes: Iterable[tuple[str, str, tuple[int, ...]]]) -> Tensors:
    return {name: (dtype, tuple(shape)) for name, dtype, shape in names_and_shapes}
