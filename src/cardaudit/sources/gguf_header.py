"""Read GGUF headers (metadata and tensor infos) with the ``gguf`` package, never tensor data.

``gguf.GGUFReader`` builds numpy views of every tensor's data, which fails on a file cut
after its header and touches pages it need not; the reader below keeps the package's own
header parsing and only records each tensor's name, type, shape and byte size.
"""

from __future__ import annotations

from math import prod
from typing import Any

from cardaudit.model import GGUFHeader, TensorInfo, frozen_mapping

#: Metadata arrays longer than this (token lists, merges) are summarised by their length.
MAX_ARRAY_ITEMS = 16


def _reader_class():
    import gguf

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

    return HeaderOnlyReader


def _field_value(field: Any) -> Any:
    import gguf

    types = list(field.types)
    if not types:
        return None
    if types[0] == gguf.GGUFValueType.ARRAY:
        count = len(field.data)
        if count > MAX_ARRAY_ITEMS:
            return f"<array of {count}>"
    try:
        value = field.contents()
    except Exception:  # an odd field must not lose the whole header
        return None
    if hasattr(value, "item"):
        value = value.item()
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
    )
