"""Read GGUF headers (metadata and tensor infos) with the ``gguf`` package, never tensor data.

``gguf.GGUFReader`` builds numpy views of every tensor's data, which fails on a file cut
after its header and touches pages it need not; and it builds a numpy view of every item
of every metadata array, which takes about 7 s for the 150k-token vocabulary and merges of
a Qwen or Llama 3 GGUF. The reader below keeps the package's own header parsing but steps
over long arrays (recording only their length) and only records each tensor's name, type,
shape and byte size: the same header parses in about 0.1 s.
"""

from __future__ import annotations

import struct
from math import prod
from typing import Any

from cardaudit.model import GGUFHeader, TensorInfo, frozen_mapping

#: Metadata arrays longer than this (token lists, merges) are summarised by their length.
MAX_ARRAY_ITEMS = 16
#: Most metadata keys accepted (real files have 20 to 60). Checked on the declared count,
#: before the reader builds an object per key (300,000 keys cost ~1 GB and ~46 s).
MAX_METADATA_KEYS = 4096
#: Most tensors accepted (the largest MoE GGUFs have a few thousand).
MAX_TENSORS = 100_000
#: Metadata strings longer than this are cut in the facts (a name is never megabytes).
MAX_STRING_CHARS = 4096


class GGUFBoundsError(ValueError):
    """The header declares more keys or tensors than any real GGUF file has."""


def _reader_class():
    import gguf
    import numpy as np

    class HeaderOnlyReader(gguf.GGUFReader):
        """GGUFReader that records tensor infos instead of mapping tensor data."""

        def _build_tensors(self, start_offs: int, fields: list) -> None:  # type: ignore[override]
            self.header_tensors: list[tuple[str, str, tuple[int, ...], int]] = []
            for field in fields:
                _name_len, name_data, _n_dims, dims, raw_dtype, _offset = field.parts
                name = bytes(name_data).decode("utf-8", errors="replace")
                ggml_type = gguf.GGMLQuantizationType(int(raw_dtype[0]))
                shape = tuple(int(dim) for dim in reversed(list(dims)))
                block_size, type_size = gguf.GGML_QUANT_SIZES[ggml_type]
                n_bytes = prod(shape) * type_size // block_size
                self.header_tensors.append((name, ggml_type.name, shape, n_bytes))
            self.tensors = []

        def _build_fields(self, offs: int, count: int) -> int:  # type: ignore[override]
            if int(count) > MAX_METADATA_KEYS:
                raise GGUFBoundsError(
                    f"the header declares {int(count):,} metadata keys "
                    f"(more than {MAX_METADATA_KEYS:,}; refused unread)"
                )
            return super()._build_fields(offs, count)

        def _build_tensor_info(self, offs: int, count: int) -> tuple:  # type: ignore[override]
            if int(count) > MAX_TENSORS:
                raise GGUFBoundsError(
                    f"the header declares {int(count):,} tensors "
                    f"(more than {MAX_TENSORS:,}; refused unread)"
                )
            return super()._build_tensor_info(offs, count)

        def _get_field_parts(self, orig_offs: int, raw_type: int) -> tuple:  # type: ignore[override]
            """Long arrays of scalars or strings: stepped over, their length kept."""
            if gguf.GGUFValueType(raw_type) != gguf.GGUFValueType.ARRAY:
                return super()._get_field_parts(orig_offs, raw_type)
            raw_itype = self._get(orig_offs, np.uint32)
            alen = self._get(orig_offs + 4, np.uint64)
            count, item = int(alen[0]), gguf.GGUFValueType(int(raw_itype[0]))
            scalar = self.gguf_scalar_to_np.get(item)
            if count <= MAX_ARRAY_ITEMS or (scalar is None and item != gguf.GGUFValueType.STRING):
                return super()._get_field_parts(orig_offs, raw_type)
            offs = orig_offs + 12
            if scalar is not None:
                offs += count * np.dtype(scalar).itemsize
            else:
                buffer = memoryview(self.data)
                for _ in range(count):  # each string: a u64 length, then its bytes
                    (length,) = struct.unpack_from("<Q", buffer, offs)
                    offs += 8 + length
            if offs > len(self.data):
                raise ValueError("metadata array runs past the end of the file")
            return offs - orig_offs, [raw_itype, alen], [], [gguf.GGUFValueType.ARRAY, item]

    return HeaderOnlyReader


def _field_value(field: Any) -> Any:
    import gguf

    types = list(field.types)
    if not types:
        return None
    if types[0] == gguf.GGUFValueType.ARRAY:
        count = len(field.data) if field.data else int(field.parts[-1][0])
        if count > MAX_ARRAY_ITEMS:
            return f"<array of {count}>"
    try:
        value = field.contents()
    except Exception:  # an odd field must not lose the whole header
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, str) and len(value) > MAX_STRING_CHARS:
        value = value[:MAX_STRING_CHARS] + "…"
    return value


def read_gguf_header(path: str, display_path: str, size: int | None) -> GGUFHeader:
    """Header of the GGUF file at ``path``; problems become ``error``, never exceptions."""
    try:
        reader = _reader_class()(path)
    except Exception as exc:  # gguf raises ValueError/IndexError/KeyError on bad files
        return GGUFHeader(display_path, size, error=f"not a readable GGUF header: {exc}")
    metadata: dict[str, Any] = {}
    for key, field in reader.fields.items():
        if key.startswith("GGUF."):
            continue
        metadata[key] = _field_value(field)
    tensors = []
    total_bytes = 0
    for name, dtype, shape, n_bytes in getattr(reader, "header_tensors", []):
        tensors.append(TensorInfo(name, dtype, shape, display_path))
        total_bytes += n_bytes
    return GGUFHeader(
        display_path,
        size,
        tuple(tensors),
        frozen_mapping(metadata),
        tensor_bytes=total_bytes,
        header_length=int(reader.data_offset),
    )
