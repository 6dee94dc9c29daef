"""Pause Python's cyclic garbage collector while a burst of acyclic objects is built.

Decoding the header of a 200,000-tensor repo builds about a million dicts, lists, tuples
and TensorInfo objects, none in a reference cycle. With the collector on, every few
hundred allocations start a collection that scans the ever larger heap again: two thirds
of the time of reading such headers (``benchmarks/targets.py``, row ``headers``). Nothing
built in a paused section can leak: reference counting still frees everything acyclic,
and the collector resumes when the outermost pause ends (threads share one counter).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
_depth = 0
_resume = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Run the block with the cyclic collector off (nested and threaded use is safe)."""
    global _depth, _resume
    with _LOCK:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _LOCK:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()
