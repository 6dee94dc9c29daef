"""Results remembered per Evidence object, for as long as it lives.

Several facts and checks ask for the same repo's structure or header walk; an Evidence is
immutable, so each result is computed once per object. Entries are keyed by the object's
identity and go when it is collected (a weak reference), so a later object at the same
address never sees another's result.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

from cardaudit.model import Evidence

T = TypeVar("T")


class EvidenceMemo(Generic[T]):
    """``memo(evidence)``: ``compute(evidence)``, once per live Evidence object."""

    def __init__(self, compute: Callable[[Evidence], T]) -> None:
        self.compute = compute
        self.entries: dict[int, tuple[weakref.ref[Evidence], T]] = {}
        self.lock = threading.RLock()  # re-entrant: a collection inside may call forget()

    def __contains__(self, key: object) -> bool:
        return key in self.entries

    def __call__(self, evidence: Evidence) -> T:
        key = id(evidence)
        with self.lock:
            known = self.entries.get(key)
        if known is not None and known[0]() is evidence:
            return known[1]
        value = self.compute(evidence)

        def forget(ref: weakref.ref[Evidence]) -> None:
            with self.lock:
                if self.entries.get(key, (None,))[0] is ref:
                    del self.entries[key]

        with self.lock:
            self.entries[key] = (weakref.ref(evidence, forget), value)
        return value
