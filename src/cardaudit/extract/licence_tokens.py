"""Licence text as normalised word tokens, the unit ``licence_diff`` aligns.

Each token keeps its offsets and line in the text it came from, so a difference can be
reported with the file's own wording and line. Normalisation follows the SPDX License List
Matching Guidelines (whitespace, case, punctuation, bullets and numbering, copyright lines,
varietal spellings from ``rules/tables/licence_terms.yaml``); a reference text's tokens are
flagged replaceable (placeholders, holder names, notice continuation lines) or optional
(how-to guidance after the end of terms, Creative Commons' preamble and closing notice).
licenseid's ``normalize_text`` applies the same guidelines to a whole string and loses the
positions, hence this module.
"""

from __future__ import annotations

import bisect
import re
from functools import cache, lru_cache
from typing import Any, NamedTuple

from cardaudit.rules import load_table

#: Passage text shown in reports is cut to this many characters.
MAX_TEXT = 600

NORMAL, VARIABLE, OPTIONAL, LINK, NUMBERING = 0, 1, 2, 3, 4
URL = re.compile(r"https?://\S+|www\.\S+", re.IGNORECASE)

WORD = re.compile(r"\w+", re.UNICODE)
#: A copyright notice line (SPDX guideline "copyright notice"): "Copyright", "©" or "(c)"
#: followed within ten words by a year, a symbol or a placeholder; or "All rights reserved".
COPYRIGHT_LINE = re.compile(
    r"^[\W_]*(?:©|\(c\)\s*\d|copyright\b(?=(?:\W+\w+){0,10}?\W*(?:\d|©|\(c\)|<|\[))"
    r"|all\s+rights\s+reserved\W*$)",
    re.IGNORECASE,
)
#: Bullets and numbering at the start of a line (SPDX guideline "bullets and numbering"),
#: after Markdown quote / heading / table markers.
LINE_MARKER = re.compile(
    r"^[\s>#|*_]*(?:(?:[*\-•◦‣▪▸+]|\(?(?:\d{1,3}(?:[.)]\d{1,3})*|[a-z]|[ivxlcdm]{1,6})[.)])"
    r"[\s*_]+)+",
    re.IGNORECASE,
)
#: Enumerators inside a line: "(a)", "(iii)", "(1)".
INLINE_MARKER = re.compile(r"\((?:\d{1,3}|[a-z]|[ivxlcdm]{1,6})\)", re.IGNORECASE)
#: Markdown link targets and HTML tags add no licence words.
MARKUP = re.compile(r"\]\([^()\[\]\s]*+\)|</?[a-z][^<>\n]{0,200}>", re.IGNORECASE)
PLACEHOLDER = re.compile(r"\[[^\]\n]{1,60}\]|<[^>\n]{1,60}>")
SENTENCE_END = re.compile(
    r"[.!?;:。！？；：](?=\s|$)|\n[ \t]*\n|\n(?=[ \t]*(?:[-*•]|\(?\w{1,3}[.)])\s)"
)


class Token(NamedTuple):
    norm: str
    start: int
    end: int
    line: int
    flag: int = NORMAL


@cache
def terms_table() -> dict[str, Any]:
    return load_table("licence_terms")


@cache
def _terms() -> dict[str, Any]:
    """The normalisation tables (needed for every comparison)."""
    table = terms_table()
    return {
        "equivalent": {str(k).lower(): str(v).lower() for k, v in table["equivalent"].items()},
        "replaceable": sorted(
            (tuple(WORD.findall(str(p).lower())) for p in table["replaceable"]),
            key=len,
            reverse=True,
        ),
        "end_of_terms": tuple(WORD.findall(str(table["end_of_terms"]).lower())),
        "guidance": [tuple(WORD.findall(str(p).lower())) for p in table["optional_guidance"]],
        "passages": [
            (
                tuple(WORD.findall(str(p["from"]).lower())),
                tuple(WORD.findall(str(p["until"]).lower())) if p.get("until") else None,
            )
            for p in table.get("optional_passages") or ()
        ],
    }


# --------------------------------------------------------------------------- tokens


def _numbering(line: str) -> list[tuple[int, int]]:
    """Spans of ``line`` that are list numbering or bullets (SPDX: ignorable)."""
    spans = []
    marker = LINE_MARKER.match(line)
    if marker:
        spans.append((0, marker.end()))
    for match in INLINE_MARKER.finditer(line):
        if match.group()[1].isdigit() and _spelled().search(line, 0, match.start()):
            continue  # "thirty (30) days": the figures restate a number
        spans.append(match.span())
    return spans


@cache
def _spelled() -> re.Pattern[str]:
    return re.compile(terms_table()["restriction"]["numbers"]["spelled"], re.IGNORECASE)


def tokens(
    text: str, excluded: tuple[tuple[int, int], ...] = (), *, reference: bool = False
) -> list[Token]:
    """The normalised word tokens of ``text``, each with its offsets and 1-based line.

    List numbering and bullets ("3.", "(a)", "iii.") stay tokens flagged NUMBERING: they
    still align (a rewrapped "Section\n3)" against "Section 3)", a version "v.\n2.0." the
    reflow put at a line start), and a difference of only NUMBERING tokens is formatting;
    every other number is a word of the licence.

    Copyright lines (a line opening a paragraph, or continuing a notice) are dropped, so a
    "copyright" that a rewrapped sentence happens to start a line with stays; in a reference
    text the lines that continue a copyright notice (the FSF's address under its copyright
    line) are marked replaceable.
    """
    equivalent = _terms()["equivalent"]
    found: list[Token] = []
    offset = 0
    in_notice, paragraph_start = False, True
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        start, offset = offset, offset + len(line)
        opens = paragraph_start
        paragraph_start = not line.strip() or line.rstrip()[-1:] in ".:;!?)"
        if any(a <= start < b for a, b in excluded):
            continue
        if (opens or in_notice) and COPYRIGHT_LINE.match(line):
            in_notice = paragraph_start = True
            continue
        in_notice = in_notice and bool(line.strip())
        flag = VARIABLE if reference and in_notice else NORMAL
        markup = [m.span() for m in MARKUP.finditer(line)] if "<" in line or "](" in line else []
        numbering = _numbering(line)
        links = [m.span() for m in URL.finditer(line)] if "://" in line or "www." in line else []
        for match in WORD.finditer(line):
            at = match.start()
            if markup and any(a <= at < b for a, b in markup):
                continue
            word = match.group().lower()
            kind = flag
            if links and any(a <= at < b for a, b in links):
                kind = LINK
            elif numbering and any(a <= at < b for a, b in numbering):
                kind = NUMBERING
            found.append(
                Token(equivalent.get(word, word), start + at, start + match.end(), number, kind)
            )
    return found


def _find(words: list[str], phrase: tuple[str, ...], start: int) -> int | None:
    """Index of the first occurrence of ``phrase`` in ``words`` at or after ``start``."""
    for i in range(start, len(words) - len(phrase) + 1):
        if tuple(words[i : i + len(phrase)]) == phrase:
            return i
    return None


def _flag_reference(text: str, toks: list[Token]) -> list[Token]:
    """Mark the reference's replaceable and optional tokens."""
    terms = _terms()
    flags = [t.flag for t in toks]
    starts = [t.start for t in toks]
    for match in PLACEHOLDER.finditer(text):
        lo = bisect.bisect_left(starts, match.start())
        hi = bisect.bisect_left(starts, match.end())
        for i in range(lo, hi):
            flags[i] = VARIABLE
    words = [t.norm for t in toks]
    by_first: dict[str, list[tuple[str, ...]]] = {}
    for phrase in terms["replaceable"]:  # longest first
        by_first.setdefault(phrase[0], []).append(phrase)
    i = 0
    while i < len(words):
        for phrase in by_first.get(words[i], ()):
            if tuple(words[i : i + len(phrase)]) == phrase:
                for k in range(i, i + len(phrase)):
                    flags[k] = VARIABLE
                i += len(phrase) - 1
                break
        i += 1
    for opener, closer in terms["passages"]:
        start = _find(words, opener, 0)
        if start is None:
            continue
        stop = _find(words, closer, start) if closer else None
        for k in range(start, stop if stop is not None else len(words)):
            flags[k] = OPTIONAL
    end = _find(words, terms["end_of_terms"], 0)
    if end is not None:
        starts_ = [s for s in (_find(words, p, end) for p in terms["guidance"]) if s is not None]
        if starts_:
            opener = min(starts_)
            # the heading word right before the phrase ("APPENDIX:") belongs to it
            opener -= 1 if opener > end + len(terms["end_of_terms"]) else 0
            for k in range(opener, len(words)):
                flags[k] = OPTIONAL
    return [Token(t.norm, t.start, t.end, t.line, f) for t, f in zip(toks, flags, strict=True)]


@lru_cache(maxsize=64)
def reference_tokens(text: str) -> tuple[Token, ...]:
    return tuple(_flag_reference(text, tokens(text, reference=True)))


# --------------------------------------------------------------------------- sentences


def boundaries(text: str) -> list[int]:
    return [m.end() for m in SENTENCE_END.finditer(text)]


def sentence_of(text: str, bounds: list[int], start: int, end: int) -> str:
    """The sentence(s) of ``text`` around ``start:end``, cut to MAX_TEXT characters."""
    lo = bounds[bisect.bisect_right(bounds, start) - 1] if bisect.bisect_right(bounds, start) else 0
    hi_index = bisect.bisect_left(bounds, end)
    hi = bounds[hi_index] if hi_index < len(bounds) else len(text)
    passage = " ".join(text[lo:hi].split())
    if len(passage) > MAX_TEXT:
        core = " ".join(text[start:end].split())
        passage = core if len(core) <= MAX_TEXT else core[: MAX_TEXT - 1] + "…"
    return passage


def span_text(text: str, toks: list[Token] | tuple[Token, ...], lo: int, hi: int) -> str:
    return " ".join(text[toks[lo].start : toks[hi - 1].end].split()) if hi > lo else ""


def at_sentence_start(text: str, bounds: list[int], offset: int) -> bool:
    index = bisect.bisect_right(bounds, offset) - 1
    before = text[bounds[index] : offset] if index >= 0 else text[:offset]
    return not before.strip(" \t\n\r*#>-•")
