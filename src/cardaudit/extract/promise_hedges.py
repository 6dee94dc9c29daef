"""What makes a sentence that words a commitment no promise of the publisher's: a hedge or a
condition ("if there is interest, we may…", "如果社区有需求，我们可能会考虑…", "需要があれば、
…検討します") and reported speech, someone else's plan ("阿里通义团队表示，Qwen3系列即将发布").

The words are data (``hedges``, ``reported_speech``, ``first_person`` in
``rules/tables/promises.yaml``); what is read from structure is where they stand: reported
speech counts only before the commitment and with no first-person speaker before it, and a
first-person clause after the commitment is still read as the publisher's own, and a hedge
after the commitment is about its timing, not about whether it holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from cardaudit.rules import load_table


@dataclass(frozen=True)
class HedgeTable:
    conditions: tuple[re.Pattern[str], ...]
    modals: tuple[re.Pattern[str], ...]
    reported: re.Pattern[str]
    first_person: re.Pattern[str]


@cache
def hedge_table() -> HedgeTable:
    raw = load_table("promises")
    flags = re.IGNORECASE
    hedges = raw.get("hedges") or {}
    return HedgeTable(
        conditions=tuple(re.compile(p, flags) for p in hedges.get("conditions") or ()),
        modals=tuple(re.compile(p, flags) for p in hedges.get("modals") or ()),
        reported=re.compile(raw["reported_speech"], flags),
        first_person=re.compile(raw["first_person"], flags),
    )


def hedged(text: str, commitment_end: int | None = None) -> bool:
    """Whether ``text`` makes its commitment conditional (a condition anywhere) or tentative
    (a modal before ``commitment_end``, the end of the words that commit; anywhere when
    there are none: a roadmap bullet is its own commitment)."""
    table = hedge_table()
    if any(regex.search(text) for regex in table.conditions):
        return True
    end = len(text) if commitment_end is None else commitment_end
    return any(regex.search(text, 0, end) for regex in table.modals)


def publisher_part(text: str, commitment: int) -> str | None:
    """The part of ``text`` that is the publisher's own word about the commitment found at
    offset ``commitment``: the whole text, unless someone else is reported before it; then
    the first-person clause after it (None when there is none)."""
    table = hedge_table()
    speech = table.reported.search(text, 0, commitment)
    if speech is None or table.first_person.search(text, 0, speech.start()):
        return text
    own = table.first_person.search(text, commitment)
    return text[own.start() :] if own else None
