"""Whether a changed licence passage narrows the original it replaces.

The restriction forms (``licence_restriction.classify``) read the new wording alone; an edit
can also restrict by what it takes away: a broad scope word of a grant lost, the phrase an
attribution duty prescribes replaced (``licence_restriction.narrowed``), or a number lowered
where it bounds what the licensee may do (``licence_numbers``). Both sides of the change are
read here, in their full sentences.
"""

from __future__ import annotations

import bisect
import re

from cardaudit.extract.licence_numbers import number_change
from cardaudit.extract.licence_restriction import narrowed
from cardaudit.extract.licence_tokens import Token, span_text


def _sentence_span(text: str, bounds: list[int], start: int, end: int) -> tuple[int, int]:
    """Offsets of the sentence(s) of ``text`` around ``start:end``."""
    before = bisect.bisect_right(bounds, start)
    after = bisect.bisect_left(bounds, end)
    return (
        bounds[before - 1] if before else 0,
        bounds[after] if after < len(bounds) else len(text),
    )


#: The end of a full sentence (a duty's "you shall (A) …; and (B) display …" is one).
FULL_STOP = re.compile(r"[.!?。！？](?=\s|$)|\n[ \t]*\n")


#: How far a full sentence is looked for around a change (a text without full stops is
#: not scanned end to end for every change).
REACH = 4000


def _full_sentence(text: str, start: int, end: int) -> str:
    """The full sentence of ``text`` around ``start:end`` (not cut at ";" or ":"), collapsed."""
    lo = max((m.end() for m in FULL_STOP.finditer(text, max(0, start - REACH), start)), default=0)
    stop = FULL_STOP.search(text, end, end + REACH)
    return " ".join(text[lo : stop.end() if stop else min(len(text), end + REACH)].split())


def narrowing(
    reference_text: str,
    ref: tuple[Token, ...],
    ref_bounds: list[int],
    i1: int,
    i2: int,
    text: str,
    aud: list[Token],
    aud_bounds: list[int],
    j1: int,
    j2: int,
) -> tuple[bool, str | None]:
    """(restricts, category) of a changed passage read against the original it replaces:
    a changed number by its role (``licence_numbers``), a broad scope word lost or an
    attribution phrase replaced (``licence_restriction.narrowed``). A changed number that
    does not narrow still has its category (LIC011 says what changed)."""
    ref_change = (ref[i1].start, ref[i2 - 1].end)
    change = (aud[j1].start, aud[j2 - 1].end)
    category = narrowed(
        span_text(reference_text, ref, i1, i2),
        span_text(text, aud, j1, j2),
        _full_sentence(reference_text, *ref_change),
    )
    if category:
        return True, category
    number = number_change(
        reference_text,
        _sentence_span(reference_text, ref_bounds, *ref_change),
        ref_change,
        text,
        _sentence_span(text, aud_bounds, *change),
        change,
    )
    return (number.narrows, number.category) if number else (False, None)
