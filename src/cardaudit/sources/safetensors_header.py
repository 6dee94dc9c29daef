"""Read safetensors headers (8-byte length + JSON) without touching tensor data."""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any, BinaryIO

from cardaudit.bounded import loads_json
from cardaudit.gc_pause import gc_paused
from cardaudit.model import SafetensorsHeader, TensorInfo, frozen_mapping

#: Larger headers are refused as corrupt (the format's own reference limit is 100 MB).
MAX_HEADER_BYTES = 100_000_000
#: Largest dimension accepted: a tensor's byte offsets are u64 in the format, and no real
#: dimension comes near 2**48 (a bigger one is a corrupt or hostile header).
MAX_DIMENSION = 2**48
#: Most dimensions a shape may have (real tensors have at most 5 or 6).
MAX_RANK = 16


def _shape(value: Any) -> tuple[int, ...] | str:
    """The shape as ints, or why it is malformed (only non-negative JSON integers count)."""
    if not isinstance(value, list):
        return "a shape that is not a list"
    if len(value) > MAX_RANK:
        return f"a shape of {len(value)} dimensions"
    for dim in value:
        if isinstance(dim, bool) or not isinstance(dim, int):
            return "a shape dimension that is not an integer"
        if not 0 <= dim <= MAX_DIMENSION:
            return f"a shape dimension out of range ({str(dim)[:24]})"
    return tuple(value)


def decode_header(raw: bytes) -> Any:
    """The JSON of a header (``ValueError`` / ``UnicodeDecodeError`` when it is not JSON,
    holds NaN / Infinity or nests too deep: :func:`cardaudit.bounded.loads_json`), decoded
    with the garbage collector paused (:mod:`cardaudit.gc_pause`)."""
    with gc_paused():
        return loads_json(raw.decode("utf-8"), finite=True)


def parse_header_json(
    path: str, size: int | None, header: Mapping[str, Any], header_length: int | None = None
) -> SafetensorsHeader:
    """Build a :class:`SafetensorsHeader` from a decoded header mapping."""
    with gc_paused():
        return _parse_header_json(path, size, header, header_length)


def _parse_header_json(
    path: str, size: int | None, header: Mapping[str, Any], header_length: int | None
) -> SafetensorsHeader:
    tensors = []
    metadata: dict[str, str] = {}
    for name, info in header.items():
        if name == "__metadata__":
            if isinstance(info, dict):
                metadata = {str(k): str(v) for k, v in info.items()}
            continue
        shown = repr(name[:80] + ("…" if len(name) > 80 else ""))
        if not isinstance(info, dict) or "dtype" not in info or "shape" not in info:
            return SafetensorsHeader(path, size, error=f"tensor {shown} has no dtype/shape")
        if not isinstance(info["dtype"], str):
            return SafetensorsHeader(path, size, error=f"tensor {shown} has a malformed dtype")
        shape = _shape(info["shape"])
        if isinstance(shape, str):
            return SafetensorsHeader(path, size, error=f"tensor {shown} has {shape}")
        tensors.append(TensorInfo(name, info["dtype"], shape, path))
    return SafetensorsHeader(
        path, size, tuple(tensors), frozen_mapping(metadata), header_length=header_length
    )


def read_header(stream: BinaryIO, path: str, size: int | None) -> SafetensorsHeader:
    """Read one header from ``stream`` positioned at the start of the file."""
    prefix = stream.read(8)
    if len(prefix) < 8:
        return SafetensorsHeader(path, size, error="file is shorter than the 8-byte header length")
    (length,) = struct.unpack("<Q", prefix)
    if length > MAX_HEADER_BYTES or (size is not None and length > size - 8):
        return SafetensorsHeader(path, size, error=f"header length {length} is impossible")
    raw = stream.read(length)
    if len(raw) < length:
        return SafetensorsHeader(path, size, error="header is truncated")
    try:
        header = decode_header(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        return SafetensorsHeader(path, size, error=f"header is not valid JSON: {exc}")
    if not isinstance(header, dict):
        return SafetensorsHeader(path, size, error="header is not a JSON object")
    return parse_header_json(path, size, header, length)
