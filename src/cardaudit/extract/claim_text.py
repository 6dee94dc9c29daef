"""What one text states: the benchmarks it names, the numbers in it that can be scores,
its speed figures."""

from __future__ import annotations

import re

from cardaudit.extract.claim_table import Benchmark, ClaimTable
from cardaudit.extract.literal_filter import lowered, ruled_out, search

#: ASCII word boundaries, so that a score or a benchmark name right next to CJK text counts.
SCORE = re.compile(r"(?<![\w.@/#-])\d{1,3}(?:\.\d+)?\s*[%％]?(?![\w/]|\.\d)", re.ASCII)
URL = re.compile(r"https?://\S+")
DIGIT = re.compile(r"\d")
#: Numbers that are not scores: shots, sizes, pass@k, years, figure numbers, multiples
#: ("2倍", "3배"), and versions right after a name ("Llama 3.2", "ChatGPT 3.5",
#: "Devstral Small 1.1").
NOT_SCORES = re.compile(
    r"\b\d+[-‑]?(?:shot|k|K|B|M|T)\b|(?:pass|maj|cons|avg)@\d+|\b(?:19|20)\d\d\b"
    r"|(?<![\d.])\d++(?:\.\d+)?\s*(?:倍|배)"
    r"|\b(?:figure|fig\.|table|section|step|top|version|v)\s*\d+(?:\.\d+)*"
    r"|(?-i:\b[A-Z][\w-]*(?:\s+[A-Z][\w-]*){0,8}+)\s+\d+(?:\.\d+)*(?![\d.]*\s*%)\b",
    re.IGNORECASE | re.ASCII,
)


def benchmarks_in(text: str, table: ClaimTable) -> list[tuple[Benchmark, re.Match[str]]]:
    """Each benchmark named in ``text`` with its first mention, in table order.

    The combined pattern (every name as one alternation) finds each position where some
    name starts: it is searched again from one character after each hit, so no position is
    skipped, and there each name is only *matched* (anchored). The first position where a
    name matches gives the same match as its own ``search``, at the cost of one scan of the
    text instead of one per benchmark.
    """
    trigger = table.bench_trigger
    hit = search(trigger, text)
    if hit is None:
        return []
    first: dict[int, re.Match[str]] = {}
    benches = table.benchmarks
    while hit is not None:
        position = hit.start()
        for index, bench in enumerate(benches):
            if index not in first:
                match = bench.name.match(text, position)
                if match is not None:
                    first[index] = match
        if len(first) == len(benches):
            break
        hit = trigger.search(text, position + 1)
    return [(benches[index], first[index]) for index in sorted(first)]


def scores_in(
    text: str, table: ClaimTable, named: list[tuple[Benchmark, re.Match[str]]] | None = None
) -> list[str]:
    """Numbers in ``text`` that can be scores (benchmark names, their versions, URLs removed)."""
    stripped = URL.sub(" ", text) if "://" in text else text
    for bench, _match in named if named is not None else benchmarks_in(text, table):
        stripped = _strip_name(stripped, bench)
    stripped = NOT_SCORES.sub(" ", stripped)
    if DIGIT.search(stripped):
        stripped = table.unit_figure.sub(" ", stripped)  # "16 GB" is a figure, not a score
    return [match.group(0).strip() for match in SCORE.finditer(stripped)]


#: What may stand between a benchmark's name and its version ("MT-Bench (v2)").
_VERSION_GAP = re.compile(r"[\s(\[:-]*")


def _strip_name(text: str, bench: Benchmark) -> str:
    """``text`` without each mention of ``bench`` and the version right after it.

    One left-to-right pass (searching on from the last mention): removing a mention and
    searching the whole text again was quadratic in the mentions on a line.
    """
    pieces: list[str] = []
    pos = 0
    while pos <= len(text):
        match = bench.name.search(text, pos)
        if match is None:
            break
        end = match.end()
        if bench.versions is not None:
            gap = _VERSION_GAP.match(text, end)
            version = bench.versions.match(text, gap.end()) if gap else None
            if version and version.start() - end <= 3:
                end = version.end()
        if end == match.start():  # an empty match: keep the character and move on
            pieces.append(text[pos : end + 1])
            pos = end + 1
            continue
        pieces += [text[pos : match.start()], " "]
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)


def speed_in(text: str, table: ClaimTable) -> list[str]:
    if not DIGIT.search(text):  # every speed figure has a number
        return []
    low = lowered(text)
    return [
        match.group(0)
        for regex in table.speed
        if not ruled_out(regex, low)
        for match in regex.finditer(text)
    ]
