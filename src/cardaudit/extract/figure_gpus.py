"""GPU figures: named GPUs (``rules/tables/gpus.yaml``) and generic "2x 80GB GPUs" in the
sentences that say the model runs on them."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from cardaudit.extract.figure_model import Figure
from cardaudit.extract.figure_text import Spans, anchored_finditer, dtype_in, sentence_around
from cardaudit.model import TextFile

GPU_VERB = re.compile(
    r"\b(?:runs?|running|fits?|fitting|deploy(?:ed|able)?|serv(?:e|ed|ing)|inference|"
    r"load(?:ed)?|requires?|needs?|hosted|on\s+(?:a\s+)?single)\b",
    re.IGNORECASE,
)
COUNT_WORDS = {"single": 1, "one": 1, "a": 1, "an": 1, "two": 2, "four": 4, "eight": 8}
#: Linear: a count starts a word (no start inside a digit run) and is taken whole.
GPU_COUNT = r"(?:(?<![\w.])(?P<count>single|one|two|four|eight|an?|\d++)\s*+(?:x|×|\*)?\s*+)?"
GENERIC_GPU = re.compile(
    GPU_COUNT + r"(?<![\w.])(?P<gib>\d+)\s?GB\s+(?:GPUs?|cards?|VRAM\s+GPUs?)\b"
    r"|(?<![\w.])(?P<count2>\d++)\s*+(?:x|×|\*)\s*+(?P<gib2>\d++)\s?GB\b",
    re.IGNORECASE,
)
#: The "80GB" every GENERIC_GPU match contains (see figure_text.anchored_finditer).
GIB_ANCHOR = re.compile(r"(?<!\d)\d+\s?GB", re.IGNORECASE)


def gpu_figures(file: TextFile, body: str, repo: str, gpus: GpuMatches) -> Iterator[Figure]:
    spans = Spans()
    for entry, matches in gpus:
        for match in matches:
            if spans.covers(match.start("gpu")):
                continue
            sentence = sentence_around(body, match.start(), match.end())
            if not GPU_VERB.search(sentence):
                continue
            spans.add(match.span("gpu"))
            count = _count(match.group("count"))
            yield Figure(
                "gpu",
                entry["memory_gib"] * count,
                " ".join(match.group(0).split()),
                file.path,
                file.line_at(match.start()),
                repo,
                gpu=entry["name"],
                count=count,
                unit="GiB",
                dtype=dtype_in(sentence),
            )
    for match in anchored_finditer(GENERIC_GPU, GIB_ANCHOR, body):
        if spans.covers(match.start()):
            continue
        sentence = sentence_around(body, match.start(), match.end())
        if not GPU_VERB.search(sentence):
            continue
        gib = int(match.group("gib") or match.group("gib2"))
        count = _count(match.group("count") or match.group("count2"))
        spans.add(match.span())
        yield Figure(
            "gpu",
            gib * count,
            " ".join(match.group(0).split()),
            file.path,
            file.line_at(match.start()),
            repo,
            gpu=f"{gib}GB GPU",
            count=count,
            unit="GiB",
            dtype=dtype_in(sentence),
        )


def _count(word: str | None) -> int:
    if not word:
        return 1
    word = word.lower()
    return COUNT_WORDS.get(word) or (int(word) if word.isdigit() and int(word) > 0 else 1)


def gpu_spans(gpus: GpuMatches) -> Spans:
    spans = Spans()
    for _, matches in gpus:
        for match in matches:
            spans.add(match.span("gpu"))
    return spans


@cache
def gpu_table() -> tuple[dict[str, Any], ...]:
    """The GPU table (``rules/tables/gpus.yaml``) with compiled name patterns."""
    from cardaudit.rules import load_table

    entries = []
    for entry in load_table("gpus").get("gpus", []):
        names = "|".join(f"(?:{alias})" for alias in entry["aliases"])
        regex = re.compile(
            GPU_COUNT + r"(?:NVIDIA\s+|AMD\s+)?(?<![\w-])(?P<gpu>" + names + r")(?![\w-])",
            re.IGNORECASE,
        )
        entries.append({**entry, "regex": regex, "name_regex": _name_regex(names)})
    return tuple(entries)


def _name_regex(names: str) -> re.Pattern[str]:
    """A GPU's names alone, as whole words: what every match of its full pattern contains."""
    return re.compile(r"(?<![\w-])(?:" + names + r")(?![\w-])", re.IGNORECASE)


@cache
def _any_gpu_name() -> re.Pattern[str]:
    aliases = "|".join(f"(?:{alias})" for entry in gpu_table() for alias in entry["aliases"])
    return _name_regex(aliases)


#: Per GPU table entry, its pattern's matches in a text (what ``finditer`` yields).
GpuMatches = tuple[tuple[Mapping[str, Any], tuple[re.Match[str], ...]], ...]
#: A character that cannot occur in the count-and-vendor prefix of a GPU match ("2x NVIDIA ").
PREFIX_BREAK = re.compile(r"[^\w\s×*]")


def gpu_matches(body: str) -> GpuMatches:
    """Each GPU entry's ``regex.finditer(body)``, without running every entry over all of it.

    A full pattern starts with an optional count ("two", "8x") that Python's ``re`` must try
    at every position of the text, for every entry. Its names alone are found far faster, so
    the full pattern is only searched from just before a name: a match has its name inside,
    and nothing but word characters, spaces, "×" and "*" between its start and that name.
    """
    starts: list[int] = []
    finder = _any_gpu_name()
    found = finder.search(body)
    while found is not None:
        starts.append(found.start())
        found = finder.search(body, found.start() + 1)
    if not starts:
        return tuple((entry, ()) for entry in gpu_table())
    breaks = [match.start() for match in PREFIX_BREAK.finditer(body)]
    result = []
    for entry in gpu_table():
        matches: list[re.Match[str]] = []
        end = 0
        for start in starts:
            if start < end or not entry["name_regex"].match(body, start):
                continue
            before = bisect_left(breaks, start) - 1
            match = entry["regex"].search(body, max(end, breaks[before] + 1 if before >= 0 else 0))
            if match is None:
                break
            matches.append(match)
            end = max(match.end(), match.start() + 1)
        result.append((entry, tuple(matches)))
    return tuple(result)
