"""Whether a passage added to or changed in a licence text restricts use, and what about.

Read from the passage's grammatical form — prohibitive modals, negated permission ("does not
permit"), conditioned permission ("requires a separate written license"), contrastive
exclusion ("but not sell"), exclusive limiters, negated purposes, "agree not to", and the
same in Chinese — or a duty in a category (an attribution duty the original lacks); the
category is the first category word of the passage (or of the clause it opens). A changed
passage also restricts when it narrows the original (``narrowed``): a broad scope word of a
grant lost ("worldwide", "irrevocable", "royalty-free"), or the wording an attribution duty
prescribes replaced ("Built with Llama" → "Powered by Meta"). Forms, scope words and
categories are data in ``rules/tables/licence_terms.yaml``, compiled only when a passage
differs (most files do not).
"""

from __future__ import annotations

import bisect
import re
from functools import cache
from typing import Any

from cardaudit.extract.licence_tokens import Token, sentence_of, span_text, terms_table


@cache
def _restrictions() -> dict[str, Any]:
    """The restriction patterns, compiled only when a passage differs (most files don't)."""
    table = terms_table()["restriction"]
    return {
        "forms": [re.compile(p, re.IGNORECASE) for p in table["forms"]],
        "obligations": [re.compile(p, re.IGNORECASE) for p in table["obligations"]],
        "categories": {
            str(k): re.compile(p, re.IGNORECASE) for k, p in table["categories"].items()
        },
        "broad": [
            (re.compile(entry["words"], re.IGNORECASE), str(entry["category"]))
            for entry in table.get("broad") or ()
        ],
    }


#: A phrase in quotation marks: the wording a duty prescribes.
QUOTED = re.compile(r"[“\"]([^”“\"]{1,120})[”\"]")


def _category(text: str) -> str | None:
    """The category whose words come first in ``text``."""
    hits = [
        (m.start(), name)
        for name, rx in _restrictions()["categories"].items()
        if (m := rx.search(text)) is not None
    ]
    return min(hits)[1] if hits else None


def restriction(sentence: str, changed: str, context: str = "") -> tuple[bool, str | None]:
    """(restricts, category) for ``changed`` words inside ``sentence``.

    A sentence restricts use when it has a prohibitive or limiting form, or a duty in one of
    the categories; the change counts only when the changed words carry the form or the
    category (a renamed party inside a "may not" sentence restricts nothing new). The
    category is read from the changed words, then from ``context`` (the rest of the clause
    they open: "but not" → "sell copies"), then from the sentence.
    """
    terms = _restrictions()
    category = _category(changed) or _category(context) or _category(sentence)
    form = any(rx.search(sentence) for rx in terms["forms"])
    duty = any(rx.search(sentence) for rx in terms["obligations"])
    if not (form or (duty and category)):
        return False, None
    in_change = any(rx.search(changed) for rx in terms["forms"]) or any(
        rx.search(changed) for rx in terms["categories"].values()
    )
    if duty and not form and category != "attribution" and not in_change:
        return False, None
    return (True, category or "other") if in_change else (False, None)


def narrowed(reference_changed: str, changed: str, reference_sentence: str) -> str | None:
    """The category in which a changed passage narrows the original, or None.

    A broad scope word of the original that the new wording lacks ("worldwide" → "United
    States only", "irrevocable" → "revocable", "royalty-free" → "fee-bearing"); or words
    inside the quoted phrase an attribution duty of the original prescribes, replaced
    ("display “Built with Llama”" → "“Powered by Meta”"): a recipient who follows the file
    fails the original's duty.
    """
    terms = _restrictions()
    for words, category in terms["broad"]:
        if words.search(reference_changed) and not words.search(changed):
            return category
    attribution = terms["categories"].get("attribution")
    duty = any(rx.search(reference_sentence) for rx in terms["obligations"])
    prescribed = duty and attribution is not None and attribution.search(reference_sentence)
    if reference_changed and prescribed:
        quoted = (m.group(1) for m in QUOTED.finditer(reference_sentence))
        if any(reference_changed in phrase for phrase in quoted):
            return "attribution"
    return None


def lead_in(text: str, bounds: list[int], offset: int) -> str | None:
    """The sentence introducing the list item at ``offset`` (one ending with a colon)."""
    index = bisect.bisect_right(bounds, offset) - 1
    while index >= 1:
        sentence = text[bounds[index - 1] : bounds[index]].strip()
        if not sentence:
            index -= 1
            continue
        if sentence.endswith(":"):
            return " ".join(sentence.split())
        if not sentence.endswith(";") and not sentence.startswith(("-", "*", "•")):
            return None
        index -= 1
    return None


#: The rest of a clause after a changed passage (up to the next punctuation mark).
CLAUSE = re.compile(r"[^,;:.!?()]{0,120}")


def classify(
    text: str, aud: list[Token], bounds: list[int], j1: int, j2: int
) -> tuple[bool, str | None, int]:
    """(restricts, category, line) of the audited tokens ``j1:j2``, read sentence by
    sentence: the line is that of the first restricting sentence (a rider's heading is not
    the restriction), else of the passage's first word."""
    chunk = j1
    while chunk < j2:
        end = chunk + 1
        following = bisect.bisect_right(bounds, aud[chunk].start)
        limit = bounds[following] if following < len(bounds) else len(text)
        while end < j2 and aud[end].start < limit:
            end += 1
        sentence = sentence_of(text, bounds, aud[chunk].start, aud[end - 1].end)
        clause = CLAUSE.match(text, aud[end - 1].end, limit)
        restricts, category = restriction(
            sentence, span_text(text, aud, chunk, end), clause.group() if clause else ""
        )
        if restricts:
            return True, category, aud[chunk].line
        chunk = end
    return False, None, aud[j1].line
