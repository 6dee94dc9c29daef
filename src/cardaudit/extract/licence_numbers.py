"""A number changed in a licence clause, read for its role: what it counts and which way it
binds.

The SPDX Matching Guidelines make list numbering ignorable, never the numbers of a clause:
"700 million monthly active users" → "7 million" or "within 30 days" → "within 3 days" is a
modification. Whether it narrows the licensee's rights is read from the clause's structure,
not from known licences: the unit after the number (days, percent, users, a currency), the
bound right before it ("within", "up to" — an allowance; "greater than", "or more" — a
threshold) and, for a threshold, whether what it triggers is a duty or a prohibition. The
words are data (``restriction.numbers`` in ``rules/tables/licence_terms.yaml``). Hand-written
because no library reads a legal clause's bounds; the number parsing itself is a regex.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from cardaudit.extract.licence_tokens import terms_table

#: A number as a clause writes it: "700", "1,000,000", "2.5" (not part of a word or a
#: dotted section number's tail).
NUMBER = re.compile(
    r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w,])|(?<![\w.,])\d+(?:\.\d+)?(?!\w)"
)
#: How much text around a number is read for its unit and bound.
WINDOW = 80


@dataclass(frozen=True)
class NumberRole:
    """A changed number: its old and new value, unit category and whether the change
    narrows the licensee's rights."""

    old: float
    new: float
    category: str | None
    narrows: bool


@cache
def _table() -> dict[str, Any]:
    table = terms_table()["restriction"]
    numbers = table["numbers"]
    flags = re.IGNORECASE

    def rx(pattern: str | None) -> re.Pattern[str] | None:
        return re.compile(pattern, flags) if pattern else None

    return {
        "scale": re.compile(r"^\s+(" + "|".join(map(re.escape, numbers["scale"])) + r")\b", flags),
        "factor": {str(k).lower(): float(v) for k, v in numbers["scale"].items()},
        "units": [
            (str(spec["category"]), rx(spec.get("before")), rx(spec.get("after")))
            for spec in numbers["units"].values()
        ],
        "upper": re.compile(numbers["upper"], flags),
        "lower": re.compile(numbers["lower"], flags),
        "lower_after": re.compile(numbers["lower_after"], flags),
        "spelled": re.compile(numbers["spelled"], flags),
        "binding": [re.compile(p, flags) for p in (*table["forms"], *table["obligations"])],
    }


@dataclass(frozen=True)
class _Found:
    value: float
    start: int
    end: int  # after the scale word


def _numbers(text: str, lo: int, hi: int, within: tuple[int, int]) -> list[_Found]:
    """The numbers of ``text[lo:hi]`` (a sentence) overlapping the changed span ``within``."""
    table = _table()
    found = []
    for match in NUMBER.finditer(text, lo, hi):
        if match.end() <= within[0] or match.start() >= within[1]:
            continue
        value, end = float(match.group().replace(",", "")), match.end()
        scale = table["scale"].match(text, end, hi)
        if scale:
            value *= table["factor"][scale.group(1).lower()]
            end = scale.end()
        found.append(_Found(value, match.start(), end))
    return found


def _role(text: str, lo: int, hi: int, number: _Found) -> tuple[str | None, str | None]:
    """(unit category, bound: "upper" / "lower" / None) of ``number`` in ``text[lo:hi]``."""
    table = _table()
    before = " ".join(text[max(lo, number.start - WINDOW) : number.start].split())
    after = " ".join(text[number.end : min(hi, number.end + WINDOW)].split())
    category = None
    for name, before_rx, after_rx in table["units"]:
        if (before_rx and before_rx.search(before)) or (after_rx and after_rx.search(after)):
            category = name
            break
    lead = re.sub(r"(?:US\$|[$€£(])\s*$", "", before).rstrip()
    while (spelled := table["spelled"].search(lead)) is not None:  # "within thirty (30)"
        lead = lead[: spelled.start()].rstrip()
    if table["upper"].search(lead):
        return category, "upper"
    if table["lower"].search(lead) or table["lower_after"].search(after):
        return category, "lower"
    return category, None


def number_change(
    reference_text: str,
    reference_sentence: tuple[int, int],
    reference_change: tuple[int, int],
    text: str,
    sentence: tuple[int, int],
    change: tuple[int, int],
) -> NumberRole | None:
    """The role of a number changed between the reference's and the file's sentence, or None
    when the changed words hold no number (or the two sides hold different counts of them).

    A lower value narrows the licensee's rights when the number is an upper bound of what
    the licensee is allowed ("within 30 days", "up to 10 users"), or a lower bound that
    triggers a duty or a prohibition in its sentence ("greater than 700 million monthly
    active users …, you must request a license"); a threshold in a definition (Apache's
    "50% or more" of shares for "control") is a modification whose direction is not read.
    """
    old = _numbers(reference_text, *reference_sentence, reference_change)
    new = _numbers(text, *sentence, change)
    if not (old or new) or len(old) != len(new):
        return None
    sentence_text = text[sentence[0] : sentence[1]]
    binding = any(rx.search(sentence_text) for rx in _table()["binding"])
    first: NumberRole | None = None
    for was, now in zip(old, new, strict=True):
        if was.value == now.value:
            continue
        category, bound = _role(text, *sentence, now)
        narrows = now.value < was.value and (bound == "upper" or (bound == "lower" and binding))
        role = NumberRole(was.value, now.value, category or "threshold", narrows)
        if narrows:
            return role
        first = first or role
    return first
