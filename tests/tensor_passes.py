"""Count the passes over safetensors tensor lists (tests/test_header_passes.py and
benchmarks/headers.py): each header's tuple of tensors is swapped for one that counts."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from cardaudit.model import Evidence, TensorInfo


class CountedTensors(tuple):
    """A header's tensor tuple that counts the passes over it (class-wide)."""

    passes = 0

    def __iter__(self) -> Iterator[TensorInfo]:
        type(self).passes += 1
        return super().__iter__()


def counted(evidence: Evidence) -> Evidence:
    """``evidence`` (and its bases) with every header's tensors counting their passes."""
    headers = tuple(replace(h, tensors=CountedTensors(h.tensors)) for h in evidence.safetensors)
    return replace(evidence, safetensors=headers, base=tuple(counted(b) for b in evidence.base))
