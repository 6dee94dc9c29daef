"""How a licence file differs from its licence's reference text, passage by passage.

Identification (``licence_id``) says *which* licence a text is closest to; a 0.98 match can
still carry an added "may not be used for commercial purposes". This module compares the
file with the reference text (``licence_reference``) after the normalisation the SPDX
License List Matching Guidelines allow, and reports every substantive difference as an
added, removed or changed passage with its line in the audited file.

Why tokens and difflib, written here: the guidelines make whitespace, case, punctuation,
quotes and dashes, bullets and numbering, copyright lines and varietal spellings
equivalent, and the report needs the line and the original wording of each difference.
licenseid's ``normalize_text`` applies the same guidelines to a whole string and loses the
positions, so the texts are cut into word tokens that keep their offsets, each normalised on
its own; ``difflib.SequenceMatcher`` (standard library, no junk heuristic) then aligns the
two token sequences. A word-level alignment is insensitive to rewrapping and Markdown
rendering, and its opcodes are exactly the added / removed / changed passages.

What the guidelines treat as replaceable or optional (SPDX templates' ``<<var>>`` and
``<<beginOptional>>``) is approximated from the reference text itself: bracketed
placeholders (``[yyyy]``, ``<copyright holders>``), the holder phrases in
``rules/tables/licence_terms.yaml``, a short title before the first clause, and everything
the how-to guidance after "END OF TERMS AND CONDITIONS" (the Apache appendix), where only an
added restriction counts. List numbering stays in the token stream flagged as such, so it
still aligns and a difference of only numbering is formatting; every other number is a word
of the licence ("700 million" → "7 million" is a modification). Whether a passage restricts
use is read from its grammatical form (prohibitive modals, negated or conditioned permission,
exclusive limiters, negated purposes; the same table) and, for a changed passage, from what
it narrows in the original (``licence_narrowing``: a scope word lost, an attribution phrase
replaced, a bound lowered), not from a list of known riders.
"""

from __future__ import annotations

import bisect
import difflib
import itertools
import re
from dataclasses import dataclass
from functools import lru_cache

from cardaudit.extract.licence_narrowing import narrowing
from cardaudit.extract.licence_restriction import classify, lead_in, restriction
from cardaudit.extract.licence_tokens import (
    LINK,
    MAX_TEXT,
    NORMAL,
    NUMBERING,
    OPTIONAL,
    VARIABLE,
    WORD,
    Token,
    at_sentence_start,
    boundaries,
    reference_tokens,
    sentence_of,
    span_text,
    tokens,
)
from cardaudit.model import Modification

#: Tokens of the audited text beyond this multiple of the reference (plus a margin) are
#: not compared: such a file is mostly something else, and the alignment cost grows with
#: the product of the lengths.
MAX_LENGTH_RATIO = 4
MAX_EXTRA_TOKENS = 4000
#: Differences separated by fewer equal tokens than this are one passage.
MERGE_GAP = 3
#: A leading passage this short (a title such as "MIT License") is formatting.
TITLE_TOKENS = 12
#: A replaced placeholder may be filled with at most this many tokens.
MAX_FILL_TOKENS = 20

#: Words that change no term when added or dropped alone (a copy that lost an "an").
ARTICLES = frozenset({"a", "an", "the"})


@dataclass(frozen=True)
class Comparison:
    """The outcome of comparing one file with its reference (``note`` when not compared)."""

    reference: str
    source: str
    modifications: tuple[Modification, ...] = ()
    note: str | None = None


def _slide(
    toks: list[Token] | tuple[Token, ...], text: str, bounds: list[int], lo: int, hi: int
) -> int:
    """How far to shift an inserted (or removed) run ``lo:hi`` to the left so it starts a
    sentence: difflib may align "…the Software. The Software must not…" with the insertion
    after the first "the Software"; sliding a run over equal tokens changes nothing else."""
    shift = 0
    while lo - shift - 1 >= 0 and toks[lo - shift - 1].norm == toks[hi - shift - 1].norm:
        if at_sentence_start(text, bounds, toks[lo - shift].start):
            return shift
        shift += 1
    return shift if at_sentence_start(text, bounds, toks[lo - shift].start) else 0


def _chunks(toks: list[Token] | tuple[Token, ...], text: str) -> list[tuple[int, int]]:
    """Token ranges of the sentences of ``text``."""
    bounds = boundaries(text)
    ranges, lo = [], 0
    for i in range(1, len(toks) + 1):
        if i == len(toks) or bisect.bisect_right(bounds, toks[i - 1].start) != bisect.bisect_right(
            bounds, toks[i].start
        ):
            ranges.append((lo, i))
            lo = i
    return ranges


def _opcodes(
    ref: tuple[Token, ...], reference_text: str, aud: list[Token], text: str
) -> list[tuple[str, int, int, int, int]]:
    """difflib opcodes over the two token sequences, computed in two passes: sentences
    first (a licence copy shares almost all of them with its reference), then words inside
    the runs of sentences that differ. Equal sentences are equal token runs, so the result
    is a valid alignment of the whole sequences, at a fraction of a word-level pass."""
    ref_words, aud_words = [t.norm for t in ref], [t.norm for t in aud]
    ref_chunks, aud_chunks = _chunks(ref, reference_text), _chunks(aud, text)
    outer = difflib.SequenceMatcher(
        None,
        [tuple(ref_words[a:b]) for a, b in ref_chunks],
        [tuple(aud_words[a:b]) for a, b in aud_chunks],
        autojunk=False,
    )
    opcodes: list[tuple[str, int, int, int, int]] = []

    def add(tag: str, i1: int, i2: int, j1: int, j2: int) -> None:
        if opcodes and tag == "equal" and opcodes[-1][0] == "equal":
            last = opcodes.pop()
            i1, j1 = last[1], last[3]
        opcodes.append((tag, i1, i2, j1, j2))

    for tag, c1, c2, d1, d2 in outer.get_opcodes():
        i1 = ref_chunks[c1][0] if c1 < len(ref_chunks) else len(ref)
        i2 = ref_chunks[c2 - 1][1] if c2 > c1 else i1
        j1 = aud_chunks[d1][0] if d1 < len(aud_chunks) else len(aud)
        j2 = aud_chunks[d2 - 1][1] if d2 > d1 else j1
        if tag == "equal":
            add("equal", i1, i2, j1, j2)
            continue
        inner = difflib.SequenceMatcher(None, ref_words[i1:i2], aud_words[j1:j2], autojunk=False)
        for tag2, a1, a2, b1, b2 in inner.get_opcodes():
            add(tag2, i1 + a1, i1 + a2, j1 + b1, j1 + b2)
    return opcodes


def _groups(opcodes: list[tuple[str, int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    """Non-equal opcodes, merged across equal runs shorter than MERGE_GAP."""
    groups: list[list[int]] = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            continue
        if groups and i1 - groups[-1][1] < MERGE_GAP and j1 - groups[-1][3] < MERGE_GAP:
            groups[-1][1], groups[-1][3] = i2, j2
        else:
            groups.append([i1, i2, j1, j2])
    return [tuple(g) for g in groups]  # type: ignore[misc]


def _without_numbering(
    ref: tuple[Token, ...], aud: list[Token], i1: int, i2: int, j1: int, j2: int
) -> tuple[int, int, int, int]:
    """A difference without the list numbering at its ends ("iv." before a removed item)."""
    while i1 < i2 and ref[i1].flag == NUMBERING:
        i1 += 1
    while i2 > i1 and ref[i2 - 1].flag == NUMBERING:
        i2 -= 1
    while j1 < j2 and aud[j1].flag == NUMBERING:
        j1 += 1
    while j2 > j1 and aud[j2 - 1].flag == NUMBERING:
        j2 -= 1
    return i1, i2, j1, j2


def _in_optional(ref: tuple[Token, ...], i1: int, i2: int) -> bool:
    """Whether reference tokens ``i1:i2`` (or an insertion before ``i1``) are optional."""
    if i2 > i1:
        return all(t.flag == OPTIONAL for t in ref[i1:i2])
    return i1 > 0 and ref[i1 - 1].flag == OPTIONAL


def _trivial(toks: list[Token] | tuple[Token, ...], lo: int, hi: int) -> bool:
    """Only list numbering, articles, link words or stray enumerator letters: a difference
    that changes no term (clauses renumbered, a link the licensor moved, "an" lost in a
    copy). A digit that is not list numbering (``NUMBERING``, flagged when tokenised) is a
    clause's number ("700 million", "30 days"): SPDX's guidelines do not make numbers
    equivalent, so it is never trivial."""
    return all(
        t.flag in (LINK, NUMBERING)
        or t.norm in ARTICLES
        or re.fullmatch(r"[a-z]|[ivxlcdm]{1,6}", t.norm)
        for t in toks[lo:hi]
    )


def _excluded_parts(text: str, licence: str, also: tuple[str, ...]) -> tuple[tuple[int, int], ...]:
    """Parts of ``text`` (between separator lines) that are other licences found in it."""
    if not also:
        return ()
    from cardaudit.extract.licence_id import MIN_PART_WORDS, SEPARATOR, identify_text

    cuts = [0, *(m.start() for m in SEPARATOR.finditer(text)), len(text)]
    spans = []
    wanted = {a.lower() for a in also} - {licence.lower()}
    for start, end in itertools.pairwise(cuts):
        part = text[start:end]
        if len(WORD.findall(part)) < MIN_PART_WORDS:
            continue
        found = identify_text(part)
        if found.licence and found.licence.lower() in wanted:
            spans.append((start, end))
    return tuple(spans)


def _another_licence(
    text: str, aud: list[Token], j1: int, j2: int, replaced: int, licence: str | None
) -> bool:
    """Whether the added words ``j1:j2`` are a whole other licence (a BSD text appended to an
    Apache LICENSE for a bundled tokenizer): identified with confidence on their own."""
    from cardaudit.extract.licence_id import MIN_CONFIDENCE, MIN_PART_WORDS, identify_text

    if j2 - j1 < MIN_PART_WORDS or replaced > (j2 - j1) // 10:
        return False
    found = identify_text(text[aud[j1].start : aud[j2 - 1].end])
    return (
        found.licence is not None
        and found.confidence >= MIN_CONFIDENCE
        and (licence is None or found.licence.lower() != licence.lower())
    )


def compare(
    text: str,
    reference_text: str,
    *,
    excluded: tuple[tuple[int, int], ...] = (),
    licence: str | None = None,
) -> tuple[tuple[Modification, ...], str | None]:
    """The substantive differences of ``text`` from ``reference_text`` (and a note when the
    texts could not be compared)."""
    if len(text) > MAX_LENGTH_RATIO * len(reference_text) + 10 * MAX_EXTRA_TOKENS:
        return (), (  # decided on characters first: a 4 MB file is not tokenised for nothing
            f"not compared: {len(text):,} characters against a reference of "
            f"{len(reference_text):,} (the file is mostly something else)"
        )
    ref = reference_tokens(reference_text)
    aud = tokens(text, excluded)
    if not aud:
        return (), "no licence words to compare"
    if len(aud) > MAX_LENGTH_RATIO * len(ref) + MAX_EXTRA_TOKENS:
        return (), (
            f"not compared: {len(aud):,} words against a reference of {len(ref):,} "
            "(the file is mostly something else)"
        )
    opcodes = _opcodes(ref, reference_text, aud, text)
    first_equal = next((j1 for tag, _i1, _i2, j1, _j2 in opcodes if tag == "equal"), len(aud))
    ref_bounds, aud_bounds = boundaries(reference_text), boundaries(text)
    found: list[Modification] = []
    for group in _groups(opcodes):
        i1, i2, j1, j2 = _without_numbering(ref, aud, *group)
        if i1 == i2 and j1 == j2:
            continue  # only list numbering differs
        if i1 == i2 and j2 > j1:
            shift = _slide(aud, text, aud_bounds, j1, j2)
            i1, i2, j1, j2 = i1 - shift, i2 - shift, j1 - shift, j2 - shift
        elif j1 == j2 and i2 > i1:
            shift = _slide(ref, reference_text, ref_bounds, i1, i2)
            i1, i2, j1, j2 = i1 - shift, i2 - shift, j1 - shift, j2 - shift
        ref_flags = {t.flag for t in ref[i1:i2]}
        optional = _in_optional(ref, i1, i2)
        title = j1 <= first_equal and (j1 == 0 or i1 == 0) and max(i2 - i1, j2 - j1) <= TITLE_TOKENS
        if j1 == j2:  # removed
            # only optional words besides a leading title ("Creative Commons Attribution 4.0
            # International" above its optional preamble)
            normal = [k for k in range(i1, i2) if ref[k].flag == NORMAL]
            headed = i1 == 0 and bool(normal) and normal[-1] < TITLE_TOKENS
            if ref_flags <= {VARIABLE, OPTIONAL} or title or headed or _trivial(ref, i1, i2):
                continue
            removed = span_text(reference_text, ref, i1, i2)
            sentence = sentence_of(reference_text, ref_bounds, ref[i1].start, ref[i2 - 1].end)
            restricted, category = restriction(sentence, removed)
            if not restricted:  # an item of a list of restrictions ("You agree not to…:")
                lead = lead_in(reference_text, ref_bounds, ref[i1].start)
                restricted, category = restriction(lead, lead) if lead else (False, None)
            line = aud[j1].line if j1 < len(aud) else aud[-1].line
            found.append(
                Modification(
                    "removed",
                    sentence if len(sentence) <= MAX_TEXT else removed[:MAX_TEXT],
                    line,
                    category=category if restricted else None,
                )
            )
            continue
        if _another_licence(text, aud, j1, j2, i2 - i1, licence):
            continue  # a third-party licence appended without a separator line
        sentence = sentence_of(text, aud_bounds, aud[j1].start, aud[j2 - 1].end)
        restricts, category, line = classify(text, aud, aud_bounds, j1, j2)
        if i2 > i1:  # read against the original: a narrowing names its own category
            narrows, narrowed_category = narrowing(
                reference_text, ref, ref_bounds, i1, i2, text, aud, aud_bounds, j1, j2
            )
            if narrows or not restricts:
                restricts, category = restricts or narrows, narrowed_category or category
        if not restricts:
            if optional or title or (_trivial(aud, j1, j2) and _trivial(ref, i1, i2)):
                continue
            if ref_flags == {VARIABLE} and j2 - j1 <= MAX_FILL_TOKENS:
                continue  # a placeholder or holder name filled in
        reference_sentence = (
            sentence_of(reference_text, ref_bounds, ref[i1].start, ref[i2 - 1].end)
            if i2 > i1
            else None
        )
        found.append(
            Modification(
                "changed" if i2 > i1 else "added",
                sentence,
                line,
                reference_text=reference_sentence,
                restricts=restricts,
                category=category,
            )
        )
    return tuple(found), None


@lru_cache(maxsize=256)
def compare_file(text: str, licence: str, also: tuple[str, ...] = ()) -> Comparison | None:
    """Compare a licence file identified as ``licence`` with its reference text; None when
    cardaudit has no reference text for it. Memoised: the same text (Apache-2.0 in the
    model, code and base repos) is compared once per process."""
    from cardaudit.extract.licence_reference import reference_for

    reference = reference_for(licence)
    if reference is None:
        return None
    modifications, note = compare(
        text, reference.text, excluded=_excluded_parts(text, licence, also), licence=licence
    )
    return Comparison(reference.licence, reference.source, modifications, note)
