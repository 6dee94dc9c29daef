"""Base models: the ``base_model`` a card names, fetched from the Hub to a bounded depth.

Cycles are detected (reported, never followed); a merge's several parents are all fetched;
a base shared by two parents is fetched once. A base that cannot be fetched is a finding
(SRC010), not a fatal error.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from cardaudit.errors import SourceError
from cardaudit.model import Card, Evidence, Location, Problem

BASE_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?$")
#: How many generations of base models are fetched for Hub targets by default.
DEFAULT_BASE_DEPTH = 3

Fetch = Callable[[str], Evidence]


def declared_bases(card: Card | None) -> list[tuple[str, int | None]]:
    """The card's ``base_model`` values (a string or a list), each with its line."""
    if card is None:
        return []
    value: Any = card.metadata.get("base_model")
    line = card.key_line("base_model")
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    lines = card.raw.splitlines()
    out: list[tuple[str, int | None]] = []
    for item in items:
        text = str(item).strip()
        if not text or text in (name for name, _ in out):
            continue
        where = line
        if line is not None and isinstance(value, list):
            # The list item's own line, searched below the key (within the front matter).
            for number in range(line, min(len(lines), card.body_start_line)):
                if text in lines[number - 1] and number > line:
                    where = number
                    break
        out.append((text, where))
    return out


@dataclass
class Lineage:
    """Follow base models through ``fetch`` (an id → Evidence function raising SourceError)."""

    fetch: Fetch
    depth: int
    cache: dict[str, Evidence] = field(default_factory=dict)
    #: Problems met at any depth; the caller adds them to the audited repo's evidence.
    problems: list[Problem] = field(default_factory=list)

    def attach(
        self, evidence: Evidence, ancestors: tuple[str, ...] = (), level: int = 0
    ) -> Evidence:
        """``evidence`` with its base models (and theirs, to ``depth``) attached."""
        if level >= self.depth:
            return evidence
        chain = (*ancestors, evidence.target.id)
        seen = {name.lower() for name in chain}
        bases: list[Evidence] = list(evidence.base)
        problems = self.problems
        whose = "" if level == 0 else f"{evidence.target.id}: "
        for base_id, line in declared_bases(evidence.card):
            path = evidence.card.path if evidence.card else None
            where = Location(path, line, "base_model", "model" if level == 0 else "base")
            if base_id.lower() in seen or base_id.lower() in {b.target.id.lower() for b in bases}:
                if base_id.lower() in seen:
                    loop = " → ".join([*chain, base_id])
                    problems.append(
                        Problem(
                            "SRC012", f"{whose}base model lineage loops: {loop}", where, base_id
                        )
                    )
                continue
            if not BASE_ID.match(base_id):
                problems.append(
                    Problem(
                        "SRC010",
                        f"{whose}base model {base_id!r} is not a Hub repo id and was not fetched",
                        where,
                        base_id,
                    )
                )
                continue
            try:
                base = self.cache.get(base_id.lower())
                if base is None:
                    base = self.fetch(base_id)
                    self.cache[base_id.lower()] = base
            except SourceError as exc:
                problems.append(
                    Problem(
                        "SRC010",
                        f"{whose}base model {base_id} could not be fetched: {exc}",
                        where,
                        base_id,
                    )
                )
                continue
            bases.append(self.attach(base, chain, level + 1))
        return replace(evidence, base=tuple(bases))
