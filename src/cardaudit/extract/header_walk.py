"""One pass over a repo's safetensors tensor list builds what every reader of it needs.

A sharded MoE repo lists 200,000 tensors or more. The parameter count (by dtype and model
part, FP4 packing), the structure compared with a base (normalised name → shape), the
header-only stubs in the parameter details and rule MEM009 (each shard's size against the
data its header describes) all read the same list: :func:`walk_headers` walks it once and
:func:`header_walk` keeps the result per repo (per live Evidence object), so the count, the
derivation facts, the derivation checks and the memory checks share it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from math import prod
from typing import Any

from cardaudit.extract.evidence_memo import EvidenceMemo
from cardaudit.extract.quantization import (
    DTYPE_BYTES,
    UNPACKED_DTYPES,
    Fp4Labels,
    is_aux_tensor,
    logical_dtype,
    logical_elements,
    quantization_of,
)
from cardaudit.extract.tensor_parts import num_layers, tensor_part
from cardaudit.model import Evidence, SafetensorsHeader, TensorInfo
from cardaudit.rules import load_table

#: Integer storage left packed after unpacking what is known (GPTQ / AWQ / compressed-tensors
#: int, FP4, bitsandbytes): EXL2 ``q_weight``, EXL3 ``trellis``, HQQ and the like. Their
#: elements are not parameters, and their logical shapes are not in the header.
OPAQUE_DTYPES = frozenset({"I16", "I32", "U16", "U32"})
OPAQUE_MIN_ELEMENTS = 4096


@dataclass(frozen=True)
class ShardWalk:
    """What one readable header's tensors add up to."""

    path: str
    #: Elements times dtype width of every tensor the header describes (rule MEM009).
    data_bytes: float
    #: Whether some tensor has elements (a file of header only is then a stub).
    has_data: bool
    size: int | None
    header_length: int | None
    #: The names of its tensors (rule MEM007: every tensor of the index is in some shard).
    names: frozenset[str] = frozenset()

    @property
    def header_only(self) -> bool:
        """A file holding its header and no tensor data (a stub; see rule MEM009)."""
        if self.header_length is None or self.size is None:
            return False
        return self.has_data and self.size == 8 + self.header_length


@dataclass(frozen=True)
class HeaderWalk:
    """The readable headers' tensors, walked once."""

    #: :func:`count_tensors`' result over every readable header.
    counted: Mapping[str, Any]
    #: One entry per readable header, in the evidence's order.
    shards: tuple[ShardWalk, ...]
    #: Normalised tensor name → shape over the model's own files (adapter files excluded),
    #: what :mod:`cardaudit.extract.structure` compares with a base.
    shapes: Mapping[str, tuple[int, ...]]


class TensorCount:
    """Exact logical counts of tensors fed one at a time, split by dtype and model part.

    U8 tensors wait until the end of the walk: whether one holds two FP4 values a byte
    depends on a sibling scale tensor that may come later in the list.
    """

    def __init__(self, config: Mapping[str, Any] | None) -> None:
        self.quant_bits = quantization_of(config).bits
        self.layers = num_layers(config)
        self.fp4 = Fp4Labels()
        self.by_dtype: Counter[str] = Counter()
        self.parts: Counter[str] = Counter()
        self.stored_bytes = 0.0
        self.stored_elements = 0
        self.aux_bytes = 0.0
        self.aux_tensors = 0
        self.seen: set[str] = set()
        self.duplicates = 0
        self.opaque: list[str] = []
        self.packed: list[tuple[TensorInfo, int]] = []

    def add(self, tensor: TensorInfo, elements: int, size: float) -> None:
        """Count ``tensor`` (``elements`` and ``size`` in bytes already computed)."""
        self.fp4.see(tensor)
        name = tensor.name
        if name in self.seen:
            self.duplicates += 1
            return
        self.seen.add(name)
        self.stored_bytes += size
        self.stored_elements += elements
        if is_aux_tensor(name):
            self.aux_bytes += size
            self.aux_tensors += 1
            return
        dtype = tensor.dtype
        if dtype in UNPACKED_DTYPES:  # fast path: floats are never packed
            self.by_dtype[dtype] += elements
            self.parts[tensor_part(name, self.layers)] += elements
        elif dtype == "U8":
            self.packed.append((tensor, elements))
        else:
            self._add_quantized(tensor, elements)

    def _add_quantized(self, tensor: TensorInfo, elements: int) -> None:
        logical = logical_elements(tensor.name, tensor.dtype, self.quant_bits, elements)
        label = logical_dtype(tensor.name, tensor.dtype, self.quant_bits)
        if label in OPAQUE_DTYPES and elements >= OPAQUE_MIN_ELEMENTS:
            self.opaque.append(tensor.name)
        self.by_dtype[label] += logical
        self.parts[tensor_part(tensor.name, self.layers)] += logical

    def result(self) -> dict[str, Any]:
        labels = self.fp4.labels()
        for tensor, elements in self.packed:
            label = labels.get(tensor.name)
            if label is None:
                self._add_quantized(tensor, elements)
            else:
                self.by_dtype[label] += 2 * elements
                self.parts[tensor_part(tensor.name, self.layers)] += 2 * elements
        self.packed = []
        return {
            "total": sum(self.by_dtype.values()),
            "by_dtype": dict(sorted(self.by_dtype.items())),
            "parts": dict(self.parts),
            "stored_bytes": int(self.stored_bytes),
            "stored_elements": self.stored_elements,
            "aux_bytes": int(self.aux_bytes),
            "aux_tensors": self.aux_tensors,
            "tensors": len(self.seen),
            "duplicate_tensors": self.duplicates,
            "opaque_tensors": list(self.opaque),
        }


def count_tensors(
    tensors: Iterable[TensorInfo], config: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Exact logical counts of safetensors tensors, split by dtype and model part."""
    count = TensorCount(config)
    for tensor in tensors:
        elements = prod(tensor.shape)
        count.add(tensor, elements, elements * DTYPE_BYTES.get(tensor.dtype, 0))
    return count.result()


def walk_headers(
    headers: Iterable[SafetensorsHeader],
    config: Mapping[str, Any] | None,
    normalise: Callable[[str], str] | None = None,
) -> HeaderWalk:
    """Walk the tensors of every readable header once (see the module docstring)."""
    normalise = normalise or tensor_name_normaliser()
    count = TensorCount(config)
    shards: list[ShardWalk] = []
    shapes: dict[str, tuple[int, ...]] = {}
    widths = DTYPE_BYTES
    for header in headers:
        if header.error:
            continue
        own = not header.path.rsplit("/", 1)[-1].startswith("adapter_model")
        data = 0.0
        has_data = False
        names: list[str] = []
        for tensor in header.tensors:
            names.append(tensor.name)
            shape = tensor.shape
            elements = prod(shape)
            size = elements * widths.get(tensor.dtype, 0)
            data += size
            has_data = has_data or elements != 0
            if own:  # adapter weights are not the model's own tensors
                shapes[normalise(tensor.name)] = shape
            count.add(tensor, elements, size)
        shards.append(
            ShardWalk(
                header.path, data, has_data, header.size, header.header_length, frozenset(names)
            )
        )
    return HeaderWalk(count.result(), tuple(shards), shapes)


def tensor_name_normaliser() -> Callable[[str], str]:
    """A tensor name with the lineage table's prefixes rewritten (``model.language_model.``
    → ``model.``), the table read once: most names match no prefix, which one ``startswith``
    over all prefixes rejects."""
    rewrites = tuple(
        (str(rewrite["from"]), str(rewrite["to"]))
        for rewrite in load_table("lineage").get("tensor_prefixes") or ()
    )
    prefixes = tuple(before for before, _ in rewrites)

    def normalise(name: str) -> str:
        if not name.startswith(prefixes):
            return name
        for before, after in rewrites:
            if name.startswith(before):
                return after + name[len(before) :]
        return name  # pragma: no cover - startswith(prefixes) said one matches

    return normalise


def _walk_of(evidence: Evidence) -> HeaderWalk:
    config = evidence.config if isinstance(evidence.config, Mapping) else None
    return walk_headers(evidence.safetensors, config)


#: The walk of one repo's safetensors headers, computed once per evidence object.
header_walk: EvidenceMemo[HeaderWalk] = EvidenceMemo(_walk_of)
